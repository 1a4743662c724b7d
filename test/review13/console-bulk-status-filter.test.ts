import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkFixture, confirmFields, consoleLogin, consolePost } from './console-support';

/**
 * Review 13: the console's bulk form carries the queue's filter, but `bulkFilterOf` dropped its status: the
 * queue shows the open exceptions (its default), the bulk action acted on every status, accepted and resolved
 * ones too — a bulk comment or assignment landed on exceptions the person never saw in the queue, and a month's
 * resolved discrepancies counted against MAX_BULK, so the bulk form of a small open queue was refused.
 */

let f: Awaited<ReturnType<typeof bulkFixture>>;

beforeAll(async () => {
  f = await bulkFixture();
}, 120_000);

afterAll(async () => {
  await f?.close();
});

describe('review13: the console bulk action keeps the queue status filter', () => {
  it('a bulk comment from the open queue touches only open exceptions', async () => {
    const { cookie, csrf } = await consoleLogin(f.srv.base, f.team.analyst.token);
    const queue = await (await fetch(`${f.srv.base}/console/exceptions`, { headers: { cookie } })).text();
    expect(queue).toContain(f.unpaid);
    expect(queue).not.toContain(f.psp); // accepted: not in the open queue
    const form = { _csrf: csrf, status: 'open', bulk_action: 'comment', reason: 'looked at the open ones' };
    const preview = await (await consolePost(f.srv.base, '/console/exceptions/bulk', cookie, form)).text();
    expect(preview).toContain(f.unpaid);
    expect(preview).not.toContain(f.psp);
    // the confirm form as the preview wrote it
    const fields = confirmFields(preview);
    const r = await consolePost(f.srv.base, '/console/exceptions/bulk', cookie, fields);
    expect(r.status).toBe(200);
    expect(await f.comments(f.unpaid)).toBe(1);
    expect(await f.comments(f.psp)).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reopenException } from '../../src/exceptions/actions';
import { project } from '../exceptions/support';
import { bulkFixture, confirmFields, consoleLogin, consolePost } from './console-support';

/**
 * Review 13: the console's bulk action is previewed (a dry run) and then "a second button applies exactly that"
 * (docs/console.md). The confirm form carried only the filter, so the apply planned the filter again: an
 * exception that came to match between the preview and the click (here one reopened by an approver) was acted
 * on though the person never saw it listed. The apply now refuses (409, nothing written) when what it would
 * change is not what was previewed.
 */

let f: Awaited<ReturnType<typeof bulkFixture>>;

beforeAll(async () => {
  f = await bulkFixture();
}, 120_000);

afterAll(async () => {
  await f?.close();
});

describe('review13: the console bulk apply does what the preview listed', () => {
  it('refuses, writing nothing, when another exception came to match since the preview', async () => {
    const { cookie, csrf } = await consoleLogin(f.srv.base, f.team.analyst.token);
    const form = { _csrf: csrf, currency: 'UAH', bulk_action: 'comment', reason: 'asked the PSP' };
    const preview = await (await consolePost(f.srv.base, '/console/exceptions/bulk', cookie, form)).text();
    expect(preview).not.toContain(f.psp); // accepted: not open, not listed
    // the confirm form as the preview wrote it
    const fields = confirmFields(preview);
    expect(fields.confirm).toBe('1');
    await reopenException({ sql: f.db.sql, store: f.store }, f.team.approver, {
      id: f.psp,
      reason: 'the PSP wrote back',
    });
    await project(f.db.sql, f.store);
    const r = await consolePost(f.srv.base, '/console/exceptions/bulk', cookie, fields);
    expect(await f.comments(f.psp)).toBe(0);
    expect(r.status).toBe(409);
  });

  it('applies when nothing changed since the preview', async () => {
    const { cookie, csrf } = await consoleLogin(f.srv.base, f.team.analyst.token);
    const form = { _csrf: csrf, type: 'order_not_at_psp', bulk_action: 'comment', reason: 'asked the shop' };
    const preview = await (await consolePost(f.srv.base, '/console/exceptions/bulk', cookie, form)).text();
    const fields = confirmFields(preview);
    const before = await f.comments(f.unpaid);
    const r = await consolePost(f.srv.base, '/console/exceptions/bulk', cookie, fields);
    expect(r.status).toBe(200);
    expect(await f.comments(f.unpaid)).toBe(before + 1);
  });
});

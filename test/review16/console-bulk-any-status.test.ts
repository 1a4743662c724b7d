import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkFixture, confirmFields, consoleLogin, consolePost } from '../review13/console-support';

/**
 * The queue filtered to any status (`status=`, its "any" option) shows accepted exceptions beside the open
 * ones, but its bulk form left the empty status out of its hidden fields, and a bulk form without `status`
 * reads as the queue's default, open: a bulk comment "on these" previewed and applied to the open ones only,
 * while the person had the accepted ones on the screen too. The form now carries the status as the queue had it.
 */

let f: Awaited<ReturnType<typeof bulkFixture>>;

beforeAll(async () => {
  f = await bulkFixture();
}, 120_000);

afterAll(async () => {
  await f?.close();
});

/** The bulk form of a queue page, as a browser would send it with an action and a reason filled in. */
function bulkFormOf(queue: string): Record<string, string> {
  const form = /<form method="post" action="\/console\/exceptions\/bulk" class="bulk">([\s\S]*?)<\/form>/.exec(queue);
  if (!form) throw new Error('no bulk form on the queue');
  return { ...confirmFields(form[1]!), bulk_action: 'comment', reason: 'looked at every one of these' };
}

describe('the bulk form of a queue of any status', () => {
  it('previews and applies to every exception the queue shows, accepted ones too', async () => {
    const { cookie } = await consoleLogin(f.srv.base, f.team.analyst.token);
    const queue = await (await fetch(`${f.srv.base}/console/exceptions?status=`, { headers: { cookie } })).text();
    expect(queue).toContain(f.unpaid);
    expect(queue).toContain(f.psp);
    const preview = await (await consolePost(f.srv.base, '/console/exceptions/bulk', cookie, bulkFormOf(queue))).text();
    expect(preview).toContain(f.unpaid);
    expect(preview).toContain(f.psp);
    const r = await consolePost(f.srv.base, '/console/exceptions/bulk', cookie, confirmFields(preview));
    expect(r.status).toBe(200);
    expect(await f.comments(f.unpaid)).toBe(1);
    expect(await f.comments(f.psp)).toBe(1);
  });

  it('the open queue (no status given) still acts on the open ones only', async () => {
    const { cookie } = await consoleLogin(f.srv.base, f.team.analyst.token);
    const queue = await (await fetch(`${f.srv.base}/console/exceptions`, { headers: { cookie } })).text();
    expect(queue).not.toContain(f.psp);
    const preview = await (await consolePost(f.srv.base, '/console/exceptions/bulk', cookie, bulkFormOf(queue))).text();
    expect(preview).toContain(f.unpaid);
    expect(preview).not.toContain(f.psp);
  });
});

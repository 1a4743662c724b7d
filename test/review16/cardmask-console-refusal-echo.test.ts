import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idOf } from '../exceptions/support';
import { actionForm, consoleFixture, consoleLogin, consolePost } from '../review13/console-support';

/**
 * The JSON APIs mask a card number in what a refusal quotes (answerText), but the console's HTML refusals quoted
 * the person's input as typed: an assignee, a decision or a queue filter holding a card number (pasted in the
 * wrong field) came back whole in the page's alert. Now the console's refusals mask it as the APIs do.
 */

const PAN = '4111111111111111';
const MASKED = '411111******1111';
let f: Awaited<ReturnType<typeof consoleFixture>>;

beforeAll(async () => {
  f = await consoleFixture();
}, 120_000);

afterAll(async () => {
  await f?.close();
});

/** The alert paragraphs of a page. */
const alerts = (page: string) => [...page.matchAll(/<p role="alert"[^>]*>([\s\S]*?)<\/p>/g)].map((m) => m[1]!);

describe("the console's refusals", () => {
  it('an action refused for its assignee or decision', async () => {
    const { cookie } = await consoleLogin(f.srv.base, f.team.analyst.token);
    const id = await idOf(f.db.sql, 'order_not_at_psp');
    const assign = await actionForm(f.srv.base, cookie, id, 'assign');
    const r = await consolePost(f.srv.base, `/console/exceptions/${id}/assign`, cookie, {
      ...assign,
      assignee: `card ${PAN}`,
    });
    expect(r.status).toBeGreaterThanOrEqual(400);
    const said = alerts(await r.text());
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('assignee');
    expect(said[0]).toContain(MASKED);
    expect(said[0]).not.toContain(PAN);

    const accept = await actionForm(f.srv.base, cookie, id, 'accept');
    const d = await consolePost(f.srv.base, `/console/exceptions/${id}/accept`, cookie, {
      ...accept,
      decision: PAN,
      note: 'looked at it',
    });
    expect(d.status).toBeGreaterThanOrEqual(400);
    const page = await d.text();
    expect(alerts(page).join('\n')).toContain('decision');
    expect(alerts(page).join('\n')).toContain(MASKED);
    expect(page).not.toContain(PAN);
  });

  it('a queue filter refused', async () => {
    const { cookie } = await consoleLogin(f.srv.base, f.team.analyst.token);
    const r = await fetch(`${f.srv.base}/console/exceptions?type=${PAN}`, { headers: { cookie } });
    const said = alerts(await r.text());
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`type: ${MASKED}`);
  });
});

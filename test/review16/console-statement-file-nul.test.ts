import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleFixture, consoleLogin } from '../review13/console-support';

/**
 * GET /console/statements/file?name= checked the name's form (a plain file name of a statement's type) and
 * then looked it up among the recorded runs in PostgreSQL, which takes no NUL in a text: `name=a%00.pdf`
 * failed the query and the console answered 500, a server error for a bad request. A name with a control
 * character is no statement's: answered as any unknown name, 404, with the page.
 */

let f: Awaited<ReturnType<typeof consoleFixture>>;

beforeAll(async () => {
  f = await consoleFixture();
}, 120_000);

afterAll(async () => {
  await f?.close();
});

describe('a statement file name holding a NUL', () => {
  it('is not found (404 with the page), not a server error', async () => {
    const { cookie } = await consoleLogin(f.srv.base, f.team.viewer.token);
    for (const name of ['a%00.pdf', '%00.xlsx', '2024-05_SM-A%00_Alpha.pdf']) {
      const r = await fetch(`${f.srv.base}/console/statements/file?name=${name}`, { headers: { cookie } });
      expect(r.status, name).toBe(404);
      expect(await r.text(), name).toContain('<!doctype html>');
    }
    // an unknown name of the same form answers the same
    const unknown = await fetch(`${f.srv.base}/console/statements/file?name=a.pdf`, { headers: { cookie } });
    expect(unknown.status).toBe(404);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, type Team } from '../exceptions/support';
import { consoleServer } from './console-support';

/**
 * Review 13: the console's login form is the one POST without a CSRF token (there is no session yet), and it
 * read no Origin either: a page on another site could post its own token to /console/login and the browser took
 * the session cookie — the person then worked the exceptions signed in as someone else (login CSRF), their
 * comments, proposals and approvals recorded under the other person's name. A login posted from another origin
 * is refused (403, no cookie); one from the console itself, or with no Origin (curl, tests), still logs in.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let srv: { base: string; close: () => Promise<void> };

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  team = await addTeam(store);
  srv = await consoleServer(db.sql, store);
}, 120_000);

afterAll(async () => {
  await srv?.close();
  await store?.close();
  await db?.drop();
});

const login = (token: string, headers: Record<string, string>) =>
  fetch(`${srv.base}/console/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });

describe('review13: a login posted from another site', () => {
  it('is refused with no session cookie', async () => {
    const r = await login(team.analyst.token, { origin: 'https://evil.example' });
    expect(r.status).toBe(403);
    expect(r.headers.get('set-cookie')).toBeNull();
  });

  it('is refused when the browser says so (Sec-Fetch-Site cross-site or same-site), whatever the Origin', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const r = await login(team.analyst.token, { origin: srv.base, 'sec-fetch-site': site });
      expect(r.status).toBe(403);
      expect(r.headers.get('set-cookie')).toBeNull();
    }
  });

  it('from the console behind a proxy that rewrites Host (the browser says same-origin) logs in', async () => {
    const r = await login(team.analyst.token, { origin: 'https://recon.example', 'sec-fetch-site': 'same-origin' });
    expect(r.status).toBe(303);
  });

  it('from the console itself (same origin) logs in', async () => {
    const r = await login(team.analyst.token, { origin: srv.base });
    expect(r.status).toBe(303);
    expect(r.headers.get('set-cookie')).toContain('recon_session=');
  });
});

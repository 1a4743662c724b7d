import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEvent } from '../../src/events/catalog';
import { ExceptionCommented, exceptionStream } from '../../src/events/exception-events';
import { proposeDecision } from '../../src/exceptions/actions';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';
import { consoleLogin, consolePost, consoleServer } from './console-support';

/**
 * Review 13: the console's bulk form carries the queue's filter, but `bulkFilterOf` dropped its status: the
 * queue shows the open exceptions (its default), the bulk action acted on every status, accepted and resolved
 * ones too — a bulk comment or assignment landed on exceptions the person never saw in the queue, and a month's
 * resolved discrepancies counted against MAX_BULK, so the bulk form of a small open queue was refused.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let srv: { base: string; close: () => Promise<void> };
let psp = ''; // amount_mismatch, accepted (withhold) below: no longer open
let unpaid = ''; // order_not_at_psp: open

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  unpaid = await idOf(db.sql, 'order_not_at_psp');
  await proposeDecision({ sql: db.sql, store }, team.analyst, { id: psp, decision: 'withhold', note: 'held' });
  await project(db.sql, store);
  srv = await consoleServer(db.sql, store);
}, 120_000);

afterAll(async () => {
  await srv?.close();
  await store?.close();
  await db?.drop();
});

const comments = async (id: string) =>
  (await store.readStream(exceptionStream(id))).filter((e) => isEvent(ExceptionCommented, e)).length;

describe('review13: the console bulk action keeps the queue status filter', () => {
  it('a bulk comment from the open queue touches only open exceptions', async () => {
    const { cookie, csrf } = await consoleLogin(srv.base, team.analyst.token);
    const queue = await (await fetch(`${srv.base}/console/exceptions`, { headers: { cookie } })).text();
    expect(queue).toContain(unpaid);
    expect(queue).not.toContain(psp); // accepted: not in the open queue
    const form = { _csrf: csrf, status: 'open', bulk_action: 'comment', reason: 'looked at the open ones' };
    const preview = await (await consolePost(srv.base, '/console/exceptions/bulk', cookie, form)).text();
    expect(preview).toContain(unpaid);
    expect(preview).not.toContain(psp);
    // the confirm form as the preview wrote it
    const fields = Object.fromEntries(
      [...preview.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    const r = await consolePost(srv.base, '/console/exceptions/bulk', cookie, fields);
    expect(r.status).toBe(200);
    expect(await comments(unpaid)).toBe(1);
    expect(await comments(psp)).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEvent } from '../../src/events/catalog';
import { ExceptionCommented, exceptionStream } from '../../src/events/exception-events';
import { proposeDecision, reopenException } from '../../src/exceptions/actions';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from '../exceptions/support';
import { consoleLogin, consolePost, consoleServer } from './console-support';

/**
 * Review 13: the console's bulk action is previewed (a dry run) and then "a second button applies exactly that"
 * (docs/console.md). The confirm form carried only the filter, so the apply planned the filter again: an
 * exception that came to match between the preview and the click (here one reopened by an approver) was acted
 * on though the person never saw it listed. The apply now refuses (409, nothing written) when what it would
 * change is not what was previewed.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let srv: { base: string; close: () => Promise<void> };
let psp = ''; // amount_mismatch: accepted, then reopened between the preview and the apply
let unpaid = '';

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

describe('review13: the console bulk apply does what the preview listed', () => {
  it('refuses, writing nothing, when another exception came to match since the preview', async () => {
    const { cookie, csrf } = await consoleLogin(srv.base, team.analyst.token);
    const form = { _csrf: csrf, currency: 'UAH', bulk_action: 'comment', reason: 'asked the PSP' };
    const preview = await (await consolePost(srv.base, '/console/exceptions/bulk', cookie, form)).text();
    expect(preview).not.toContain(psp); // accepted: not open, not listed
    // the confirm form as the preview wrote it
    const fields = Object.fromEntries(
      [...preview.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    expect(fields.confirm).toBe('1');
    await reopenException({ sql: db.sql, store }, team.approver, { id: psp, reason: 'the PSP wrote back' });
    await project(db.sql, store);
    const r = await consolePost(srv.base, '/console/exceptions/bulk', cookie, fields);
    expect(await comments(psp)).toBe(0);
    expect(r.status).toBe(409);
  });

  it('applies when nothing changed since the preview', async () => {
    const { cookie, csrf } = await consoleLogin(srv.base, team.analyst.token);
    const form = { _csrf: csrf, type: 'order_not_at_psp', bulk_action: 'comment', reason: 'asked the shop' };
    const preview = await (await consolePost(srv.base, '/console/exceptions/bulk', cookie, form)).text();
    const fields = Object.fromEntries(
      [...preview.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
    );
    const before = await comments(unpaid);
    const r = await consolePost(srv.base, '/console/exceptions/bulk', cookie, fields);
    expect(r.status).toBe(200);
    expect(await comments(unpaid)).toBe(before + 1);
  });
});

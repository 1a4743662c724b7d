import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 13: `auditor-token` is the id RECON_AUDITOR_TOKEN acts under (a viewer), and `bootstrap` the adder of
 * the first admin; both were free user ids. An admin could add an approver `auditor-token`, whose decisions and
 * approvals the histories then sign with the name documented as the read-only auditor token's (and a user
 * `bootstrap` as the adder of the first admin): a decision that does not name its person. Both are refused.
 */

let db: TestDatabase;
let store: EventStore;
let admin = '';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  admin = (await addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'admin' })).token;
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

describe('review13: ids recon itself signs with', () => {
  it.each(['auditor-token', 'bootstrap'])('%s cannot be a user id', async (id) => {
    await expect(addUser(store, admin, { id, name: 'Someone', role: 'approver' })).rejects.toMatchObject({
      code: 'INVALID_USER',
    });
  });
});

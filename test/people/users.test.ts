import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USERS_STREAM } from '../../src/events/people-events';
import { personOfToken } from '../../src/people/authenticate';
import { readDirectory } from '../../src/people/directory';
import { addUser, revokeUser, rotateToken } from '../../src/people/manage';
import { TOKEN_PATTERN } from '../../src/people/tokens';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Users as events (docs/exceptions.md, "People and roles"): the first is an admin added without a token, the
 * others by an admin; tokens are shown once and stored only as hashes; a rotated or revoked token stops
 * working at once; the last admin stays; a stale view cannot overwrite a concurrent change.
 */

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await db.drop();
});

const who = async (token: string | undefined) => personOfToken(await readDirectory(store), token)?.id ?? null;

describe('users', () => {
  let admin = '';
  let analyst = '';

  it('bootstraps the first user as an admin, without a token, and refuses any other first role', async () => {
    await expect(addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'analyst' })).rejects.toMatchObject({
      code: 'INVALID_USER',
      message: expect.stringContaining('--role: the first user must be an admin'),
    });
    const r = await addUser(store, undefined, { id: 'olena', name: 'Olena Koval', role: 'admin' });
    expect(r.token).toMatch(TOKEN_PATTERN);
    expect(r.user).toEqual({ id: 'olena', name: 'Olena Koval', role: 'admin' });
    admin = r.token;
    expect(await who(admin)).toBe('olena');
  });

  it('needs an admin’s token for every later user, naming RECON_TOKEN', async () => {
    await expect(addUser(store, undefined, { id: 'ivan', name: 'Ivan', role: 'analyst' })).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: expect.stringContaining('RECON_TOKEN'),
    });
    await expect(addUser(store, 'recon_wrong', { id: 'ivan', name: 'Ivan', role: 'analyst' })).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
    analyst = (await addUser(store, admin, { id: 'ivan', name: 'Ivan Petrenko', role: 'analyst' })).token;
    await expect(addUser(store, analyst, { id: 'mark', name: 'Mark', role: 'viewer' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'ivan is an analyst; users.manage is not theirs',
    });
  });

  it('checks each field, naming it, and never reuses an id', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ id: 'Ivan', name: 'x', role: 'viewer' }, 'user id: expected a lower-case letter'],
      [{ id: 'ivan', name: 'x', role: 'viewer' }, 'user id: ivan exists'],
      [{ id: 'p1', name: 'a\u202Eb', role: 'viewer' }, '--name:'],
      [{ id: 'p2', name: 'P', role: 'root' }, '--role: expected one of viewer, analyst, approver, admin'],
    ];
    for (const [u, message] of cases)
      await expect(addUser(store, admin, u as { id: string; name: string; role: string })).rejects.toMatchObject({
        message: expect.stringContaining(message),
      });
  });

  it('stores no token, only its hash', async () => {
    const events = await store.readStream(USERS_STREAM);
    const text = JSON.stringify(events, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    expect(text).not.toContain(admin);
    expect(text).not.toContain(analyst);
    expect(events.map((e) => e.type)).toEqual(['UserAdded', 'UserAdded']);
  });

  it('rotates a token: the old one stops at once; one’s own without being an admin', async () => {
    const own = await rotateToken(store, analyst, 'ivan');
    expect(await who(analyst)).toBeNull();
    expect(await who(own.token)).toBe('ivan');
    analyst = own.token;
    await expect(rotateToken(store, analyst, 'olena')).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('revokes a user for good with a reason, and never the last admin', async () => {
    await expect(revokeUser(store, admin, 'olena', 'leaving')).rejects.toMatchObject({ code: 'LAST_ADMIN' });
    await expect(revokeUser(store, admin, 'ivan', '  ')).rejects.toMatchObject({
      message: '--reason: must not be empty',
    });
    await revokeUser(store, admin, 'ivan', 'moved to another team');
    expect(await who(analyst)).toBeNull();
    await expect(rotateToken(store, admin, 'ivan')).rejects.toMatchObject({ code: 'USER_REVOKED' });
    await expect(addUser(store, admin, { id: 'ivan', name: 'Ivan', role: 'viewer' })).rejects.toMatchObject({
      code: 'USER_EXISTS',
    });
    const dir = await readDirectory(store);
    expect(dir.users.get('ivan')).toMatchObject({ revokedBy: 'olena', role: 'analyst' });
  });

  it('refuses a change made on a stale view: of two concurrent adds one wins, nothing half-applied', async () => {
    const before = (await store.readStream(USERS_STREAM)).length;
    const results = await Promise.allSettled([
      addUser(store, admin, { id: 'anna', name: 'Anna', role: 'approver' }),
      addUser(store, admin, { id: 'taras', name: 'Taras', role: 'viewer' }),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled').length;
    expect(won).toBeGreaterThanOrEqual(1);
    expect((await store.readStream(USERS_STREAM)).length).toBe(before + won);
  });

  it('lets the configured auditor token in as a viewer, compared whole', async () => {
    const dir = await readDirectory(store);
    const auditor = 'a-long-auditor-token-0123456789';
    expect(personOfToken(dir, auditor, auditor)).toEqual({
      id: 'auditor-token',
      name: 'auditor (RECON_AUDITOR_TOKEN)',
      role: 'viewer',
    });
    expect(personOfToken(dir, auditor.slice(0, -1), auditor)).toBeNull();
    expect(personOfToken(dir, admin, auditor)?.id).toBe('olena');
  });
});

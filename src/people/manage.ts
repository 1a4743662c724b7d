import { newEvent } from '../events/catalog';
import { type Role, ROLES, UserAdded, UserRevoked, UserTokenRotated, USERS_STREAM } from '../events/people-events';
import { checkText, NAME_TEXT, NOTE_TEXT } from '../input-rules';
import type { EventStore } from '../store/types';
import {
  activeAdmins,
  AUDITOR_TOKEN_PERSON,
  type Directory,
  type Person,
  readDirectory,
  type User,
  userOfToken,
} from './directory';
import { NotAllowed, UserRefused } from './errors';
import { type Action, may } from './roles';
import { hashToken, newToken } from './tokens';

/**
 * Adding, rotating and revoking users. Each reads the directory, checks who acts and what they may do, and
 * appends one event against the revision it read: a concurrent change makes the append fail, nothing is
 * half-applied, and the command can be run again.
 */

export const USER_ID = /^[a-z][a-z0-9._-]{0,63}$/;

/** The person a token acts as, allowed to do `action`; refused naming RECON_TOKEN otherwise. */
export function actorFor(dir: Directory, token: string | undefined, action: Action): User {
  if (!token) throw new NotAllowed('UNAUTHENTICATED', `RECON_TOKEN: not set; ${action} needs a user's token`);
  const user = userOfToken(dir, token);
  if (!user) throw new NotAllowed('UNAUTHENTICATED', 'RECON_TOKEN: not the token of an active user');
  if (!may(user.role, action))
    throw new NotAllowed('FORBIDDEN', `${user.id} is ${article(user.role)} ${user.role}; ${action} is not theirs`);
  return user;
}

/** ids recon signs with itself: the auditor token's person and the adder of the first admin */
const RESERVED_IDS: readonly string[] = [AUDITOR_TOKEN_PERSON.id, 'bootstrap'];

const article = (role: Role) => (/^[aeiou]/.test(role) ? 'an' : 'a');

export interface NewUser {
  readonly id: string;
  readonly name: string;
  readonly role: string;
}

/** Checks a new user's fields, naming the one that is wrong. */
function checkNewUser(dir: Directory, u: NewUser): { id: string; name: string; role: Role } {
  if (!USER_ID.test(u.id))
    throw new UserRefused(
      'INVALID_USER',
      `user id: expected a lower-case letter then up to 63 of a-z 0-9 . _ -, got ${JSON.stringify(u.id.slice(0, 80))}`,
    );
  if (RESERVED_IDS.includes(u.id))
    throw new UserRefused('INVALID_USER', `user id: ${u.id} is the name recon signs with itself; choose another`);
  if (dir.users.has(u.id)) throw new UserRefused('USER_EXISTS', `user id: ${u.id} exists (ids are never reused)`);
  const name = checkText(u.name, NAME_TEXT);
  if (!name.ok) throw new UserRefused('INVALID_USER', `--name: ${name.reason}`);
  if (!(ROLES as readonly string[]).includes(u.role))
    throw new UserRefused('INVALID_USER', `--role: expected one of ${ROLES.join(', ')}, got ${JSON.stringify(u.role)}`);
  return { id: u.id, name: name.value, role: u.role as Role };
}

/**
 * Adds a user and returns their token, the only time it is seen. The very first user may be added without a
 * token (`bootstrap`), and must be an administrator: someone has to be able to add the others.
 */
export async function addUser(
  store: EventStore,
  token: string | undefined,
  u: NewUser,
  now: Date = new Date(),
): Promise<{ user: Person; token: string }> {
  const dir = await readDirectory(store);
  const bootstrap = dir.users.size === 0;
  const by = bootstrap ? 'bootstrap' : actorFor(dir, token, 'users.manage').id;
  const checked = checkNewUser(dir, u);
  if (bootstrap && checked.role !== 'admin')
    throw new UserRefused('INVALID_USER', '--role: the first user must be an admin (who then adds the others)');
  const secret = newToken();
  const event = newEvent(UserAdded, {
    userId: checked.id,
    name: checked.name,
    role: checked.role,
    tokenHash: hashToken(secret),
    addedBy: by,
    addedAt: now.toISOString(),
  });
  await store.append(USERS_STREAM, [event], { expectedRevision: dir.revision < 0 ? 'no_stream' : dir.revision });
  return { user: { id: checked.id, name: checked.name, role: checked.role }, token: secret };
}

function activeUser(dir: Directory, id: string): User {
  const u = dir.users.get(id);
  if (!u) throw new UserRefused('NO_SUCH_USER', `user id: no user ${JSON.stringify(id.slice(0, 80))}`);
  if (u.revokedAt !== null) throw new UserRefused('USER_REVOKED', `user id: ${id} was revoked on ${u.revokedAt}`);
  return u;
}

/** A new token for a user (their own, or anyone's by an admin); the old one stops working at once. */
export async function rotateToken(
  store: EventStore,
  token: string | undefined,
  userId: string,
  now: Date = new Date(),
): Promise<{ token: string }> {
  const dir = await readDirectory(store);
  const self = userOfToken(dir, token);
  const by = self && self.id === userId ? self : actorFor(dir, token, 'users.manage');
  activeUser(dir, userId);
  const secret = newToken();
  const event = newEvent(UserTokenRotated, {
    userId,
    tokenHash: hashToken(secret),
    rotatedBy: by.id,
    rotatedAt: now.toISOString(),
  });
  await store.append(USERS_STREAM, [event], { expectedRevision: dir.revision });
  return { token: secret };
}

/** Revokes a user for good (their id is never given again); the last active admin cannot be revoked. */
export async function revokeUser(
  store: EventStore,
  token: string | undefined,
  userId: string,
  reason: string,
  now: Date = new Date(),
): Promise<void> {
  const dir = await readDirectory(store);
  const by = actorFor(dir, token, 'users.manage');
  const u = activeUser(dir, userId);
  const why = checkText(reason, NOTE_TEXT);
  if (!why.ok || why.value.trim() === '')
    throw new UserRefused('INVALID_USER', `--reason: ${why.ok ? 'must not be empty' : why.reason}`);
  if (u.role === 'admin' && activeAdmins(dir).length === 1)
    throw new UserRefused('LAST_ADMIN', `user id: ${userId} is the last active admin; add another admin first`);
  const event = newEvent(UserRevoked, { userId, revokedBy: by.id, revokedAt: now.toISOString(), reason: why.value });
  await store.append(USERS_STREAM, [event], { expectedRevision: dir.revision });
}

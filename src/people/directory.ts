import { dataOf, isEvent } from '../events/catalog';
import { type Role, UserAdded, UserRevoked, UserTokenRotated, USERS_STREAM } from '../events/people-events';
import type { EventStore, RecordedEvent } from '../store/types';
import { hashToken } from './tokens';

/** A user as the `users` stream makes them (no token: only its hash is known). */
export interface User {
  readonly id: string;
  readonly name: string;
  readonly role: Role;
  readonly addedBy: string;
  readonly addedAt: string;
  readonly tokenRotatedAt: string | null;
  /** who rotated the token last (themselves, or an admin): an admin handed another's token is seen */
  readonly tokenRotatedBy: string | null;
  readonly revokedAt: string | null;
  readonly revokedBy: string | null;
  readonly tokenHash: string;
}

/** Who made a request or ran a command: a user, or the auditor API's configured token (a viewer). */
export interface Person {
  readonly id: string;
  readonly name: string;
  readonly role: Role;
}

/** The id the RECON_AUDITOR_TOKEN acts under: read-only, so that what was configured before users keeps working. */
export const AUDITOR_TOKEN_PERSON: Person = {
  id: 'auditor-token',
  name: 'auditor (RECON_AUDITOR_TOKEN)',
  role: 'viewer',
};

export interface Directory {
  readonly users: ReadonlyMap<string, User>;
  /** the `users` stream's last revision (-1: no stream), appended against so a stale view is refused */
  readonly revision: number;
}

/** Folds the `users` stream, in order. Pure: the same events give the same directory. */
export function foldUsers(events: readonly RecordedEvent[]): Directory {
  const users = new Map<string, User>();
  let revision = -1;
  for (const e of events) {
    revision = e.revision;
    if (isEvent(UserAdded, e)) {
      const d = dataOf(UserAdded, e);
      users.set(d.userId, {
        id: d.userId,
        name: d.name,
        role: d.role,
        addedBy: d.addedBy,
        addedAt: d.addedAt,
        tokenRotatedAt: null,
        tokenRotatedBy: null,
        revokedAt: null,
        revokedBy: null,
        tokenHash: d.tokenHash,
      });
    } else if (isEvent(UserTokenRotated, e)) {
      const d = dataOf(UserTokenRotated, e);
      const u = users.get(d.userId);
      if (u)
        users.set(d.userId, { ...u, tokenHash: d.tokenHash, tokenRotatedAt: d.rotatedAt, tokenRotatedBy: d.rotatedBy });
    } else if (isEvent(UserRevoked, e)) {
      const d = dataOf(UserRevoked, e);
      const u = users.get(d.userId);
      if (u) users.set(d.userId, { ...u, revokedAt: d.revokedAt, revokedBy: d.revokedBy });
    }
  }
  return { users, revision };
}

export async function readDirectory(store: EventStore): Promise<Directory> {
  return foldUsers(await store.readStream(USERS_STREAM));
}

/** The active user a token belongs to, or null (unknown, rotated away, or revoked). */
export function userOfToken(dir: Directory, token: string | undefined): User | null {
  if (!token) return null;
  const hash = hashToken(token);
  for (const u of dir.users.values()) if (u.tokenHash === hash && u.revokedAt === null) return u;
  return null;
}

export const activeAdmins = (dir: Directory) =>
  [...dir.users.values()].filter((u) => u.role === 'admin' && u.revokedAt === null);

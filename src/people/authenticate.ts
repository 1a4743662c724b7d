import type { EventStore } from '../store/types';
import { tokenMatches } from './tokens';
import { AUDITOR_TOKEN_PERSON, type Directory, type Person, readDirectory, userOfToken } from './directory';

/**
 * Who a bearer token belongs to, for the HTTP surfaces: an active user, or the configured RECON_AUDITOR_TOKEN
 * acting as a viewer (so that what was set up before users keeps working). Users are looked up by the
 * SHA-256 of the token given; the auditor token is compared in constant time, both sides hashed first so the
 * length leaks nothing either.
 */
export function personOfToken(dir: Directory, given: string | undefined, auditorToken?: string): Person | null {
  if (given === undefined) return null;
  if (auditorToken && tokenMatches(given, auditorToken)) return AUDITOR_TOKEN_PERSON;
  const u = userOfToken(dir, given);
  return u ? { id: u.id, name: u.name, role: u.role } : null;
}

/**
 * The directory as a server sees it: read again when older than `maxAgeMs`, so a revoked or rotated token stops
 * working within that time without a read of the store on every request.
 */
export function directoryReader(store: EventStore, maxAgeMs = 1000): () => Promise<Directory> {
  let cached: { at: number; dir: Directory } | null = null;
  let pending: Promise<Directory> | null = null;
  return async () => {
    if (cached && Date.now() - cached.at < maxAgeMs) return cached.dir;
    pending ??= readDirectory(store).then(
      (dir) => {
        cached = { at: Date.now(), dir };
        pending = null;
        return dir;
      },
      (e: unknown) => {
        pending = null;
        throw e;
      },
    );
    return pending;
  };
}

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Sql } from '../db/connect';
import { personOfToken } from '../people/authenticate';
import { AUDITOR_TOKEN_PERSON, type Directory, type Person } from '../people/directory';
import { hashToken } from '../people/tokens';

/**
 * Sessions (docs/console.md, "Sessions"): a user logs in with their token once; the console gives a random
 * session id (256 bits) in a cookie and keeps only its SHA-256 in PostgreSQL (several workers share it, a
 * restart keeps people logged in). Each session has its own CSRF token, sent back in every form and compared in
 * constant time. The person is looked up again on every request: a revoked or rotated user is logged out.
 */

export const SESSION_COOKIE = 'recon_session';
export const LANGUAGE_COOKIE = 'recon_lang';
/** a working day: long enough for a shift, short enough that a forgotten browser does not stay in */
export const SESSION_HOURS = 12;

export interface Session {
  readonly person: Person;
  readonly csrf: string;
  readonly expiresAt: Date;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The request's cookies (the first of a name wins; values are not decoded: ours are base64url). */
export function cookiesOf(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const k = part.slice(0, i).trim();
    if (!out.has(k)) out.set(k, part.slice(i + 1).trim());
  }
  return out;
}

/**
 * Whether the browser reached us over TLS: the socket itself, or `X-Forwarded-Proto: https` set by a proxy the
 * operator says to trust (WEBHOOK_TRUST_PROXY / WEBHOOK_TRUSTED_PROXIES, the same trust the webhook receiver
 * uses for X-Forwarded-For). The cookie is then marked Secure.
 */
export function overTls(req: IncomingMessage, trust: { trustProxy: boolean; trustedProxies: readonly string[] }) {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  if (!trust.trustProxy) return false;
  const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  if (trust.trustedProxies.length > 0 && !trust.trustedProxies.includes(peer)) return false;
  const proto = req.headers['x-forwarded-proto'];
  return typeof proto === 'string' && proto.split(',')[0]!.trim().toLowerCase() === 'https';
}

/**
 * Whether a POST came from a page of another site. The login form has no session, so no CSRF token: this is its
 * check against a page elsewhere posting its own token (login CSRF). A browser's `Sec-Fetch-Site` decides when
 * sent (only the console's own pages, or a typed address, may post: a proxy that rewrites Host changes nothing);
 * without it, an Origin (`null` included) whose host is not the one the request was sent to. No Origin at all
 * (curl): not refused.
 */
export function crossSite(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true; // `null` (an opaque origin) or not a URL
  }
}

export function sessionCookie(id: string, secure: boolean, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${id}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** Logs a token in: a new session for its person, or null when the token is no one's. */
export async function createSession(
  sql: Sql,
  dir: Directory,
  token: string,
  auditorToken: string | undefined,
  now = new Date(),
): Promise<{ id: string; session: Session } | null> {
  const person = personOfToken(dir, token, auditorToken);
  if (!person) return null;
  const id = randomBytes(32).toString('base64url');
  const csrf = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + SESSION_HOURS * 3_600_000);
  await sql`delete from console_sessions where expires_at < ${now}`;
  await sql`insert into console_sessions (id_sha256, person_id, token_sha256, csrf, created_at, expires_at)
            values (${sha256(id)}, ${person.id}, ${hashToken(token)}, ${csrf}, ${now}, ${expiresAt})`;
  return { id, session: { person, csrf, expiresAt } };
}

/** The session of a cookie's id, still valid and its person still active; null otherwise. */
export async function sessionOf(
  sql: Sql,
  dir: Directory,
  id: string | undefined,
  auditorToken: string | undefined,
  now = new Date(),
): Promise<Session | null> {
  if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
  const [row] = await sql<{ person_id: string; token_sha256: string; csrf: string; expires_at: Date }[]>`
    select person_id, token_sha256, csrf, expires_at from console_sessions
    where id_sha256 = ${sha256(id)} and expires_at > ${now}`;
  if (!row) return null;
  const user = dir.users.get(row.person_id);
  // the same token still in force: a revoked user, a rotated token, a changed auditor token end the session
  const person: Person | null =
    user && user.revokedAt === null && user.tokenHash === row.token_sha256
      ? { id: user.id, name: user.name, role: user.role }
      : auditorToken && row.person_id === AUDITOR_TOKEN_PERSON.id && hashToken(auditorToken) === row.token_sha256
        ? AUDITOR_TOKEN_PERSON
        : null;
  return person ? { person, csrf: row.csrf, expiresAt: row.expires_at } : null;
}

export async function endSession(sql: Sql, id: string | undefined): Promise<void> {
  if (id) await sql`delete from console_sessions where id_sha256 = ${sha256(id)}`;
}

/** The form's CSRF token against the session's, in constant time (both hashed first: lengths leak nothing). */
export function csrfMatches(given: string | undefined, session: Session): boolean {
  if (given === undefined) return false;
  return timingSafeEqual(
    createHash('sha256').update(given).digest(),
    createHash('sha256').update(session.csrf).digest(),
  );
}

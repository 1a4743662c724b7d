import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A user's token: `recon_` and 43 base64url characters (256 random bits). The prefix lets secret scanners
 * and operators recognise one; only its SHA-256 is ever stored.
 */
export const TOKEN_PATTERN = /^recon_[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return `recon_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time comparison: both sides hashed to the same length first, so the length leaks nothing either. */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  return timingSafeEqual(digest(given), digest(expected));
}

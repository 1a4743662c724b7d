import { createHash, hash, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signature of section 5.4: base64url(raw SHA-1 bytes of secret + data + secret), padding kept
 * (28 characters). `data` is the base64url JSON string exactly as received.
 */
export function sign(secret: string, data: string): string {
  // Node's 'base64url' drops padding; the PSP keeps it, so translate standard base64 by hand.
  return digestOf(secret, data).replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * One-shot over the joined text: a Hash object and its three updates cost twice the hashing itself, once
 * per webhook on each side (issue 26). The joined text has the same UTF-8 bytes unless a lone surrogate
 * half at the secret's edge would pair with one of the data's: those take the parts one by one, as before.
 */
function digestOf(secret: string, data: string): string {
  const first = secret.charCodeAt(0);
  const last = secret.charCodeAt(secret.length - 1);
  if ((first >= 0xdc00 && first <= 0xdfff) || (last >= 0xd800 && last <= 0xdbff))
    return createHash('sha1').update(secret, 'utf8').update(data, 'utf8').update(secret, 'utf8').digest('base64');
  return hash('sha1', secret + data + secret, 'base64');
}

/** Constant-time comparison: the time taken does not depend on where the signatures differ. */
export function verify(secret: string, data: string, signature: string): boolean {
  const expected = Buffer.from(sign(secret, data), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  // Compare against a same-length buffer so that a length mismatch costs the same as a content mismatch.
  const padded = Buffer.alloc(expected.length);
  given.copy(padded, 0, 0, Math.min(given.length, expected.length));
  const same = timingSafeEqual(expected, padded);
  return same && given.length === expected.length;
}

/** Decodes webhook `data`: base64url, padded or not. Returns null when it is not base64url. */
export function decodeBase64Url(data: string): Buffer | null {
  const trimmed = data.replace(/=+$/, '');
  if (!/^[A-Za-z0-9_-]*$/.test(trimmed) || trimmed.length % 4 === 1) return null;
  return Buffer.from(trimmed, 'base64url');
}

export function encodeBase64Url(json: string): string {
  return Buffer.from(json, 'utf8').toString('base64url');
}

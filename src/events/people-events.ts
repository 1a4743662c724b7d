import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * The people who work recon (docs/exceptions.md, "People and roles"). One stream, `users`, appended with the
 * revision read, so two administrators acting at once cannot both win on a stale view.
 *
 * A token is never stored: only its SHA-256 (`tokenHash`, hex). Tokens are 256 random bits, so a plain hash is
 * enough (a slow password hash protects guessable secrets, not random ones).
 */

export const USERS_STREAM = 'users';

const isoInstant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO-8601 UTC instant');
const tokenHash = z.string().regex(/^[0-9a-f]{64}$/, 'SHA-256 in hex');
/** who acted: a user's id, or `bootstrap` for the first administrator added without a token */
const actor = z.string().min(1).max(64);

export const ROLES = ['viewer', 'analyst', 'approver', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const UserAdded = defineEvent(
  'UserAdded',
  1,
  z.object({
    userId: z.string().regex(/^[a-z][a-z0-9._-]{0,63}$/),
    name: z.string().min(1).max(200),
    role: z.enum(ROLES),
    tokenHash,
    addedBy: actor,
    addedAt: isoInstant,
  }),
);

export const UserTokenRotated = defineEvent(
  'UserTokenRotated',
  1,
  z.object({ userId: z.string(), tokenHash, rotatedBy: actor, rotatedAt: isoInstant }),
);

export const UserRevoked = defineEvent(
  'UserRevoked',
  1,
  z.object({ userId: z.string(), revokedBy: actor, revokedAt: isoInstant, reason: z.string().min(1).max(4000) }),
);

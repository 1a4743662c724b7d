import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * Statements e-mailed to sub-merchants (src/export/statements/delivery.ts). Stream `statement-delivery-YYYY-MM`.
 * A sending is keyed by the month, the sub-merchant, the exact files (their sha-256) and the address, so
 * the same statement is never sent twice by accident; `--resend` adds a sending with the next `resend`
 * number. A failure is recorded with its attempt number; the next run tries again.
 */

export const statementDeliveryStream = (month: string) => `statement-delivery-${month}`;

const sha = z.string().regex(/^[0-9a-f]{64}$/);
const isoInstant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO-8601 UTC instant');

const deliveryKey = {
  month: z.string().regex(/^\d{4}-\d{2}$/),
  subMerchantId: z.string().min(1),
  to: z.string().min(3),
  /** the files attached, by name and sha-256, sorted by name */
  files: z.array(z.object({ name: z.string().min(1), sha256: sha })).min(1),
};

export const StatementSent = defineEvent(
  'StatementSent',
  1,
  z.object({
    ...deliveryKey,
    /** 0 for the first sending, n for the n-th `--resend` */
    resend: z.number().int().min(0),
    /** the Message-ID the message was sent with (deterministic: a receiving system can drop a repeat) */
    messageId: z.string().min(1),
    sentAt: isoInstant,
  }),
);

export const StatementSendFailed = defineEvent(
  'StatementSendFailed',
  1,
  z.object({
    ...deliveryKey,
    resend: z.number().int().min(0),
    /** 1 for the first failed attempt of this sending, and so on */
    attempt: z.number().int().min(1),
    /** the SMTP server's answer or the connection error, without credentials */
    error: z.string().max(2000),
    failedAt: isoInstant,
  }),
);

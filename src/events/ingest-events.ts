import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * Events written by ingestion (src/ingest). Streams:
 *   payment-<posId>-<paymentId>  every observation of one payment, from every source
 *   sync-<posId>                 windows synced, count mismatches, failed windows
 *   rejections-<posId>           source records refused by validation (raw kept for inspection)
 *   heal-<posId>                 webhook re-send requests
 *
 * Amounts in events are integer minor units (hundredths of the currency unit, as the PSP's amounts
 * have at most two decimals) written as decimal strings, since JSON has no exact big integer.
 * Times are ISO-8601 UTC instants with milliseconds.
 */

export const paymentStream = (posId: string, paymentId: string) => `payment-${posId}-${paymentId}`;
export const syncStream = (posId: string) => `sync-${posId}`;
export const rejectionStream = (posId: string) => `rejections-${posId}`;
export const healStream = (posId: string) => `heal-${posId}`;

/** Integer minor units as a decimal string ("-1250"). */
export const minorString = z.string().regex(/^-?\d{1,18}$/, 'integer minor units as a string');
const isoInstant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO-8601 UTC instant');

export const operationMethod = z.enum([
  'auth',
  'purchase',
  'capture',
  'void',
  'p2p',
  'credit',
  'lookup',
  'refund',
  'dispute',
  'recurrent',
]);
export type OperationMethod = z.infer<typeof operationMethod>;
export const transactionStatus = z.enum(['init', 'pending', 'success', 'failure']);
export type TransactionStatus = z.infer<typeof transactionStatus>;

/**
 * What register and period records have in common after exact parsing, first in both and read the
 * same way from both (src/psp/parse.ts, identityOf).
 */
const normalizedRecordCommon = z.object({
  projectId: z.string().nullable(),
  orderId: z.string().nullable(),
  paymentId: z.string(),
  method: operationMethod,
  status: transactionStatus,
  /** null when the PSP gave no time */
  dateTime: isoInstant.nullable(),
  currency: z.string(),
});
export type NormalizedRecordCommon = z.infer<typeof normalizedRecordCommon>;

/** A register record (section 2.10) after exact parsing. Fields absent from the report are null. */
export const normalizedRegisterRecord = normalizedRecordCommon.extend({
  /** amount with fees applied (originalAmount + customerFee) */
  amount: minorString.nullable(),
  originalAmount: minorString.nullable(),
  customerFee: minorString.nullable(),
  merchantFee: minorString.nullable(),
  receiverName: z.string().nullable(),
  receiverAmount: minorString.nullable(),
  receiverFee: minorString.nullable(),
  reserveAmount: minorString.nullable(),
  cardMask: z.string().nullable(),
  payway: z.string().nullable(),
  /** every other field of the record, as received (the raw text keeps the exact bytes too) */
  other: z.record(z.string(), z.unknown()),
});
export type NormalizedRegisterRecord = z.infer<typeof normalizedRegisterRecord>;

/** A time-period transaction record (section 2.9) after exact parsing. */
export const normalizedPeriodRecord = normalizedRecordCommon.extend({
  /** amount requested */
  amount: minorString,
  customerFee: minorString.nullable(),
  merchantFee: minorString.nullable(),
  other: z.record(z.string(), z.unknown()),
});
export type NormalizedPeriodRecord = z.infer<typeof normalizedPeriodRecord>;

export const webhookKind = z.enum(['primary', 'capture', 'void', 'refund', 'recurring', 'other']);

/** A webhook (section 6) after exact parsing. */
export const normalizedWebhook = z.object({
  kind: webhookKind,
  paymentId: z.string(),
  orderId: z.string().nullable(),
  operationId: z.string().nullable(),
  transactionId: z.string().nullable(),
  method: operationMethod,
  status: transactionStatus,
  statusCode: z.string().nullable(),
  currency: z.string(),
  amount: minorString,
  /** fee.amount: the merchant's fee as the webhook states it */
  fee: minorString.nullable(),
  feeCurrency: z.string().nullable(),
  createdAt: isoInstant.nullable(),
  processedAt: isoInstant.nullable(),
  recurringId: z.string().nullable(),
  other: z.record(z.string(), z.unknown()),
});
export type NormalizedWebhook = z.infer<typeof normalizedWebhook>;

const windowRange = z.object({ from: isoInstant, to: isoInstant });

/**
 * Set only on a re-observation: the row read again with a content the store already holds (it went back
 * to an earlier state: success → pending → success), appended again because the row's latest observation
 * says otherwise. The id of the observation it supersedes is part of the content, so the event has an id
 * of its own (src/ingest/reobservations.ts). Absent on every other observation, whose ids and stored text
 * it leaves unchanged.
 */
const supersedes = z.uuid().optional();

export const RegisterRecordObserved = defineEvent(
  'RegisterRecordObserved',
  1,
  z.object({
    posId: z.string(),
    /** the record's JSON text exactly as the PSP sent it */
    raw: z.string(),
    record: normalizedRegisterRecord,
    supersedes,
  }),
);

export const PeriodRecordObserved = defineEvent(
  'PeriodRecordObserved',
  1,
  z.object({ posId: z.string(), raw: z.string(), record: normalizedPeriodRecord, supersedes }),
);

export const WebhookReceived = defineEvent(
  'WebhookReceived',
  1,
  z.object({
    posId: z.string(),
    /** the decoded JSON text of `data`, exactly as sent */
    raw: z.string(),
    webhook: normalizedWebhook,
  }),
);

export const SourceRecordRejected = defineEvent(
  'SourceRecordRejected',
  1,
  z.object({
    posId: z.string(),
    source: z.enum(['register', 'period', 'webhook']),
    /** field that failed, as a path ("amount", "split.0.amount") */
    field: z.string(),
    reason: z.string(),
    raw: z.string(),
    /** true when characters PostgreSQL cannot store (U+0000, lone surrogates) were written as \uXXXX in raw */
    rawEscaped: z.literal(true).optional(),
  }),
);

export const SyncWindowCompleted = defineEvent(
  'SyncWindowCompleted',
  1,
  z.object({
    posId: z.string(),
    window: windowRange,
    reportId: z.string(),
    announcedCount: z.number().int(),
    registerRecords: z.number().int(),
    periodRecords: z.number().int(),
    rejected: z.number().int(),
    appended: z.number().int(),
    durationMs: z.number().int(),
    completedAt: isoInstant,
  }),
);

export const RegisterCountMismatched = defineEvent(
  'RegisterCountMismatched',
  1,
  z.object({
    posId: z.string(),
    window: windowRange,
    reportId: z.string(),
    announcedCount: z.number().int(),
    receivedCount: z.number().int(),
    detectedAt: isoInstant,
  }),
);

export const SyncWindowFailed = defineEvent(
  'SyncWindowFailed',
  1,
  z.object({ posId: z.string(), window: windowRange, reason: z.string(), failedAt: isoInstant }),
);

export const WebhookResendRequested = defineEvent(
  'WebhookResendRequested',
  1,
  z.object({
    posId: z.string(),
    orderId: z.string(),
    paymentId: z.string(),
    operation: operationMethod,
    transactionId: z.string().nullable(),
    requestedAt: isoInstant,
    outcome: z.enum(['requested', 'failed']),
    detail: z.string().nullable(),
  }),
);

import {
  PeriodRecordObserved,
  RegisterRecordObserved,
  WebhookReceived,
  type OperationMethod,
} from '../events/ingest-events';
import type { RecordedEvent } from '../store/types';
import { isEvent } from '../events/catalog';

/**
 * What one source said about one operation of a payment (an observation), read from the payment's events,
 * and its stored forms. Amounts are bigint minor units; the amount "as read" is the amount requested: webhook
 * `amount`, period `amount`, register `originalAmount` (or `amount − customerFee` when the report lacks
 * originalAmount).
 */

export type SourceName = 'register' | 'period' | 'webhook';
export const SOURCES: readonly SourceName[] = ['register', 'period', 'webhook'];

export interface Observation {
  readonly eventId: string;
  /** commit order of the event: [commit, prepare] */
  readonly commit: bigint;
  readonly prepare: bigint;
  readonly source: SourceName;
  readonly posId: string;
  readonly paymentId: string;
  readonly orderId: string | null;
  readonly method: OperationMethod;
  readonly status: string;
  readonly currency: string;
  /** amount requested, as read */
  readonly amount: bigint | null;
  /** register `amount` (originalAmount + customerFee); null elsewhere */
  readonly grossAmount: bigint | null;
  readonly customerFee: bigint | null;
  /** register/period merchantFee; webhook fee.amount */
  readonly merchantFee: bigint | null;
  readonly receiverName: string | null;
  readonly receiverAmount: bigint | null;
  readonly receiverFee: bigint | null;
  readonly reserveAmount: bigint | null;
  /** operation time as the source gives it (register/period dateTime, webhook processed_at ?? created_at) */
  readonly dateTime: string | null;
  readonly reportId: string | null;
  /** webhook operation_id / transaction_id: tell a webhook's versions apart from another operation's */
  readonly operationRef: string | null;
  /** observedAt / receivedAt: when recon saw it */
  readonly seenAt: string | null;
}

const big = (s: string | null | undefined): bigint | null => (s === null || s === undefined ? null : BigInt(s));
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const trimName = (s: string | null): string | null => (s === null ? null : s.trim() === '' ? null : s.trim());

type Data = Record<string, unknown>;
const obj = (v: unknown, what: string): Data => {
  if (v === null || typeof v !== 'object') throw new TypeError(`payment event without ${what}`);
  return v as Data;
};
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const required = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw new TypeError(`payment event without ${what}`);
  return v;
};

/**
 * The observation carried by a payment event, or null for any other event.
 *
 * Reads the fields directly rather than through the event's zod schema (`dataOf`): every event was
 * validated against its definition when it was appended, and validating again on every read was the
 * costliest part of a projection batch. The schemas have no defaults or transforms, so the values are
 * the same.
 */
export function observationOf(e: RecordedEvent): Observation | null {
  const read = isEvent(RegisterRecordObserved, e)
    ? registerObservation
    : isEvent(PeriodRecordObserved, e)
      ? periodObservation
      : isEvent(WebhookReceived, e)
        ? webhookObservation
        : null;
  if (read === null) return null;
  const d = obj(e.data, 'data');
  return read(e, d, required(d.posId, 'posId'), e.metadata ?? {});
}

// Every observation is one object literal with the fields in one order (no spread of a shared base:
// spread copies made slow objects, ten times the cost of the rest, and one shape keeps matching fast).

function webhookObservation(e: RecordedEvent, d: Data, posId: string, meta: Data): Observation {
  const w = obj(d.webhook, 'webhook');
  return {
    eventId: e.id,
    commit: e.position.commit,
    prepare: e.position.prepare,
    source: 'webhook',
    posId,
    paymentId: required(w.paymentId, 'paymentId'),
    orderId: text(w.orderId),
    method: required(w.method, 'method') as OperationMethod,
    status: required(w.status, 'status'),
    currency: required(w.currency, 'currency'),
    amount: BigInt(required(w.amount, 'amount')),
    grossAmount: null,
    customerFee: null,
    merchantFee: big(text(w.fee)),
    receiverName: null,
    receiverAmount: null,
    receiverFee: null,
    reserveAmount: null,
    dateTime: text(w.processedAt) ?? text(w.createdAt),
    reportId: null,
    operationRef: text(w.operationId) ?? text(w.transactionId),
    seenAt: str(meta.receivedAt),
  };
}

function periodObservation(e: RecordedEvent, d: Data, posId: string, meta: Data): Observation {
  const r = obj(d.record, 'record');
  return {
    eventId: e.id,
    commit: e.position.commit,
    prepare: e.position.prepare,
    source: 'period',
    posId,
    paymentId: required(r.paymentId, 'paymentId'),
    orderId: text(r.orderId),
    method: required(r.method, 'method') as OperationMethod,
    status: required(r.status, 'status'),
    currency: required(r.currency, 'currency'),
    amount: BigInt(required(r.amount, 'amount')),
    grossAmount: null,
    customerFee: big(text(r.customerFee)),
    merchantFee: big(text(r.merchantFee)),
    receiverName: null,
    receiverAmount: null,
    receiverFee: null,
    reserveAmount: null,
    dateTime: text(r.dateTime),
    reportId: str(meta.reportId),
    operationRef: null,
    seenAt: str(meta.observedAt),
  };
}

function registerObservation(e: RecordedEvent, d: Data, posId: string, meta: Data): Observation {
  const r = obj(d.record, 'record');
  const paymentId = required(r.paymentId, 'paymentId');
  const method = required(r.method, 'method') as OperationMethod;
  const status = required(r.status, 'status');
  const currency = required(r.currency, 'currency');
  const original = big(text(r.originalAmount));
  const gross = big(text(r.amount));
  const customerFee = big(text(r.customerFee));
  return {
    eventId: e.id,
    commit: e.position.commit,
    prepare: e.position.prepare,
    source: 'register',
    posId,
    paymentId,
    orderId: text(r.orderId),
    method,
    status,
    currency,
    amount: original ?? (gross !== null ? gross - (customerFee ?? 0n) : null),
    grossAmount: gross,
    customerFee,
    merchantFee: big(text(r.merchantFee)),
    receiverName: trimName(text(r.receiverName)),
    receiverAmount: big(text(r.receiverAmount)),
    receiverFee: big(text(r.receiverFee)),
    reserveAmount: big(text(r.reserveAmount)),
    dateTime: text(r.dateTime),
    reportId: str(meta.reportId),
    operationRef: null,
    seenAt: str(meta.observedAt),
  };
}

/** Plain JSON form (amounts as strings) for storage; `observationFromJson` reverses it exactly. */
export function observationToJson(o: Observation): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = typeof v === 'bigint' ? v.toString() : v;
  return out;
}

const BIG_FIELDS = [
  'commit',
  'prepare',
  'amount',
  'grossAmount',
  'customerFee',
  'merchantFee',
  'receiverAmount',
  'receiverFee',
  'reserveAmount',
] as const;

export function observationFromJson(j: Record<string, unknown>): Observation {
  const out: Record<string, unknown> = { ...j };
  for (const k of BIG_FIELDS) out[k] = j[k] === null || j[k] === undefined ? null : BigInt(j[k] as string);
  return out as unknown as Observation;
}

const bs = (v: bigint | null): string | null => (v === null ? null : v.toString());
const bi = (v: unknown): bigint | null => (v === null || v === undefined ? null : BigInt(v as string));

/**
 * Compact stored form of an observation (a JSON array, amounts as strings; posId and paymentId are kept
 * beside it): a third of the size of `observationToJson` and no key names to parse.
 */
export function observationToRow(o: Observation): string {
  return JSON.stringify([
    o.eventId,
    o.commit.toString(),
    o.prepare.toString(),
    o.source,
    o.orderId,
    o.method,
    o.status,
    o.currency,
    bs(o.amount),
    bs(o.grossAmount),
    bs(o.customerFee),
    bs(o.merchantFee),
    o.receiverName,
    bs(o.receiverAmount),
    bs(o.receiverFee),
    bs(o.reserveAmount),
    o.dateTime,
    o.reportId,
    o.operationRef,
    o.seenAt,
  ]);
}

/** Reverses `observationToRow` exactly (given its text, or the text already parsed). */
export function observationFromRow(posId: string, paymentId: string, row: string | readonly unknown[]): Observation {
  const a = (typeof row === 'string' ? JSON.parse(row) : row) as unknown[];
  return {
    eventId: a[0] as string,
    commit: BigInt(a[1] as string),
    prepare: BigInt(a[2] as string),
    source: a[3] as SourceName,
    posId,
    paymentId,
    orderId: a[4] as string | null,
    method: a[5] as OperationMethod,
    status: a[6] as string,
    currency: a[7] as string,
    amount: bi(a[8]),
    grossAmount: bi(a[9]),
    customerFee: bi(a[10]),
    merchantFee: bi(a[11]),
    receiverName: a[12] as string | null,
    receiverAmount: bi(a[13]),
    receiverFee: bi(a[14]),
    reserveAmount: bi(a[15]),
    dateTime: a[16] as string | null,
    reportId: a[17] as string | null,
    operationRef: a[18] as string | null,
    seenAt: a[19] as string | null,
  };
}

export const isFinal = (status: string | null | undefined): boolean => status === 'success' || status === 'failure';

export function byPosition(a: Observation, b: Observation): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

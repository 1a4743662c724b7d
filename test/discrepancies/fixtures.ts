import { newEvent } from '../../src/events/catalog';
import {
  PeriodRecordObserved,
  RegisterCountMismatched,
  RegisterRecordObserved,
  SyncWindowCompleted,
  WebhookReceived,
  WebhookResendRequested,
  healStream,
  paymentStream,
  syncStream,
  type OperationMethod,
} from '../../src/events/ingest-events';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { observationOf, type Observation } from '../../src/reconciliation/observations';
import { rebuildProjection } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import type { Sql } from '../../src/db/connect';
import type { AppendRequest, EventStore, NewEvent, RecordedEvent } from '../../src/store/types';
import { projection } from '../../projections/reconciliation';
import { catchUp } from '../support/projection-spec';

/** Realistic ingest events, built with the real definitions, for the discrepancy tests. */

export const POS = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
export const GRACE_HOURS = 48;

export const at = (text: string) => new Date(text).toISOString();
export const hoursAfter = (isoText: string, h: number) => new Date(Date.parse(isoText) + h * 3_600_000).toISOString();

export interface Receiver {
  name: string;
  /** receiverAmount */
  amount: bigint;
  fee: bigint;
  reserve?: bigint;
}

export interface RegisterOp {
  paymentId: string;
  orderId?: string;
  method?: OperationMethod;
  status?: 'init' | 'pending' | 'success' | 'failure';
  dateTime: string;
  /** originalAmount */
  amount: bigint;
  customerFee?: bigint;
  merchantFee?: bigint;
  currency?: string;
  receivers?: Receiver[];
  reportId: string;
  observedAt: string;
  window?: { from: string; to: string };
}

const win = (t: string) => ({
  from: at(t.slice(0, 10) + 'T00:00:00Z'),
  to: hoursAfter(at(t.slice(0, 10) + 'T00:00:00Z'), 24),
});

/** Register rows of one operation: one per receiver (or one marketplace-own row). */
export function registerRows(op: RegisterOp): AppendRequest {
  const receivers = op.receivers ?? [];
  const merchantFee = op.merchantFee ?? receivers.reduce((a, r) => a + r.fee, 0n);
  const customerFee = op.customerFee ?? 0n;
  const rows = (receivers.length ? receivers : [null]).map((r) => {
    const record = {
      projectId: POS,
      orderId: op.orderId ?? `order-${op.paymentId}`,
      paymentId: op.paymentId,
      method: op.method ?? 'purchase',
      status: op.status ?? 'success',
      dateTime: op.dateTime,
      currency: op.currency ?? 'UAH',
      amount: (op.amount + customerFee).toString(),
      originalAmount: op.amount.toString(),
      customerFee: customerFee.toString(),
      merchantFee: merchantFee.toString(),
      receiverName: r ? r.name : null,
      receiverAmount: r ? r.amount.toString() : null,
      receiverFee: r ? r.fee.toString() : null,
      reserveAmount: r ? (r.reserve ?? 0n).toString() : null,
      cardMask: '444455******1111',
      payway: 'card',
      other: {},
    };
    return newEvent(
      RegisterRecordObserved,
      { posId: POS, raw: JSON.stringify(record), record },
      {
        metadata: {
          reportId: op.reportId,
          window: op.window ?? win(op.dateTime),
          observedAt: op.observedAt,
          source: 'register',
        },
      },
    );
  });
  return { stream: paymentStream(POS, op.paymentId), events: rows };
}

export interface PeriodOp {
  paymentId: string;
  orderId?: string;
  method?: OperationMethod;
  status?: 'init' | 'pending' | 'success' | 'failure';
  dateTime: string;
  amount: bigint;
  customerFee?: bigint;
  merchantFee?: bigint;
  currency?: string;
  reportId: string;
  observedAt: string;
}

export function periodRow(op: PeriodOp): AppendRequest {
  const record = {
    projectId: POS,
    orderId: op.orderId ?? `order-${op.paymentId}`,
    paymentId: op.paymentId,
    method: op.method ?? 'purchase',
    status: op.status ?? 'success',
    dateTime: op.dateTime,
    currency: op.currency ?? 'UAH',
    amount: op.amount.toString(),
    customerFee: (op.customerFee ?? 0n).toString(),
    merchantFee: op.merchantFee === undefined ? null : op.merchantFee.toString(),
    other: {},
  };
  return {
    stream: paymentStream(POS, op.paymentId),
    events: [
      newEvent(
        PeriodRecordObserved,
        { posId: POS, raw: JSON.stringify(record), record },
        { metadata: { reportId: op.reportId, window: win(op.dateTime), observedAt: op.observedAt, source: 'period' } },
      ),
    ],
  };
}

export interface WebhookOp {
  paymentId: string;
  orderId?: string;
  method?: OperationMethod;
  status?: 'init' | 'pending' | 'success' | 'failure';
  processedAt: string;
  amount: bigint;
  fee?: bigint | null;
  currency?: string;
  receivedAt: string;
  /** operation_id of a secondary operation (capture, void, refund): one per operation */
  operationId?: string;
}

export function webhook(op: WebhookOp): AppendRequest {
  const w = {
    kind: 'primary' as const,
    paymentId: op.paymentId,
    orderId: op.orderId ?? `order-${op.paymentId}`,
    operationId: op.operationId ?? null,
    transactionId: `tx-${op.paymentId}-${op.method ?? 'purchase'}`,
    method: op.method ?? 'purchase',
    status: op.status ?? 'success',
    statusCode: (op.status ?? 'success') === 'success' ? '1000' : null,
    currency: op.currency ?? 'UAH',
    amount: op.amount.toString(),
    fee: op.fee === null ? null : (op.fee ?? 0n).toString(),
    feeCurrency: op.currency ?? 'UAH',
    createdAt: op.processedAt,
    processedAt: op.processedAt,
    recurringId: null,
    other: {},
  };
  return {
    stream: paymentStream(POS, op.paymentId),
    events: [
      newEvent(
        WebhookReceived,
        { posId: POS, raw: JSON.stringify(w), webhook: w },
        { metadata: { receivedAt: op.receivedAt, remoteAddress: '127.0.0.1' } },
      ),
    ],
  };
}

export function syncCompleted(p: {
  posId?: string;
  from: string;
  to: string;
  completedAt: string;
  reportId: string;
  announced?: number;
  records?: number;
}): AppendRequest {
  return {
    stream: syncStream(p.posId ?? POS),
    events: [
      newEvent(SyncWindowCompleted, {
        posId: p.posId ?? POS,
        window: { from: p.from, to: p.to },
        reportId: p.reportId,
        announcedCount: p.announced ?? 0,
        registerRecords: p.records ?? p.announced ?? 0,
        periodRecords: 0,
        rejected: 0,
        appended: 0,
        durationMs: 5,
        completedAt: p.completedAt,
      }),
    ],
  };
}

export function countMismatch(p: {
  from: string;
  to: string;
  reportId: string;
  announced: number;
  received: number;
  detectedAt: string;
}): AppendRequest {
  return {
    stream: syncStream(POS),
    events: [
      newEvent(RegisterCountMismatched, {
        posId: POS,
        window: { from: p.from, to: p.to },
        reportId: p.reportId,
        announcedCount: p.announced,
        receivedCount: p.received,
        detectedAt: p.detectedAt,
      }),
    ],
  };
}

export function resendRequested(p: {
  paymentId: string;
  method?: OperationMethod;
  requestedAt: string;
}): AppendRequest {
  return {
    stream: healStream(POS),
    events: [
      newEvent(WebhookResendRequested, {
        posId: POS,
        orderId: `order-${p.paymentId}`,
        paymentId: p.paymentId,
        operation: p.method ?? 'purchase',
        transactionId: null,
        requestedAt: p.requestedAt,
        outcome: 'requested',
        detail: null,
      }),
    ],
  };
}

export function subMerchant(id: string, name: string, holdDays = 90): AppendRequest {
  return {
    stream: subMerchantStream(id),
    events: [newEvent(SubMerchantRegistered, { subMerchantId: id, name, reserveHoldDays: holdDays })],
  };
}

/** Append requests → observations with increasing positions (commit order = order given), without a store. */
export function recorded(requests: AppendRequest[]): Observation[] {
  let n = 0n;
  return requests.flatMap((r) =>
    r.events.map((e) => {
      n += 1n;
      const rec: RecordedEvent = {
        id: e.id,
        stream: r.stream,
        revision: 0,
        position: { commit: n, prepare: n },
        appendId: String(n),
        type: e.type,
        version: e.version,
        data: e.data,
        metadata: e.metadata ?? {},
        recordedAt: new Date(0),
      };
      return observationOf(rec)!;
    }),
  );
}

/** Appends requests one stream-append at a time (so commit order = the order given). */
export async function appendAll(store: EventStore, requests: readonly AppendRequest[]): Promise<void> {
  for (const r of requests) await store.append(r.stream, r.events as NewEvent[]);
}

export function deps(sql: Sql, store: EventStore, graceHours = GRACE_HOURS) {
  return { sql, store, log: silentLogger, timezone: 'UTC', graceHours, projections: [projection] };
}

/** Catches the projection up to the head of the store (test/support/projection-spec.ts `catchUp`). */
export async function project(sql: Sql, store: EventStore, batchSize = 1000, graceHours = GRACE_HOURS) {
  return catchUp(deps(sql, store, graceHours), { batchSize });
}

/** Rebuilds the reconciliation from zero in batches of `batchSize` and catches it up (replay = live checks). */
export async function rebuildInBatches(sql: Sql, store: EventStore, batchSize: number): Promise<void> {
  await rebuildProjection(deps(sql, store), 'reconciliation', { batchSize });
  await project(sql, store, batchSize);
}

export interface DiscrepancyView {
  id: string;
  type: string;
  status: string;
  payment_id: string | null;
  method: string | null;
  receiver_name: string | null;
  sub_merchant_id: string | null;
  values: Record<string, unknown>;
  evidence: string[];
  detected_at: Date | null;
  detected_by_event: string;
  resolved_at: Date | null;
  resolved_by_event: string | null;
  accepted_by: string | null;
  accepted_note: string | null;
}

export async function discrepancies(sql: Sql): Promise<DiscrepancyView[]> {
  return (await sql`select * from recon.discrepancies order by type, payment_id, id`) as unknown as DiscrepancyView[];
}

/**
 * Each named `recon.*` view as its row count and the md5 of its rows in text order: two read models compare
 * equal row for row when their digests do.
 */
export async function viewsDigest(sql: Sql, views: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const v of views) {
    const [r] = await sql.unsafe<{ d: string; n: number }[]>(
      `select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as d, count(*)::int as n from recon.${v} t`,
    );
    out.push(`${v}:${r!.n}:${r!.d}`);
  }
  return out;
}

import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../events/audit-events';
import type { EventData } from '../events/catalog';
import {
  PeriodRecordObserved,
  RegisterCountMismatched,
  RegisterRecordObserved,
  SyncWindowCompleted,
  WebhookReceived,
  WebhookResendRequested,
} from '../events/ingest-events';
import { SubMerchantRegistered } from '../events/ledger-events';
import { handlerTable, on, onRecorded, type Handler } from '../projector/handlers';
import type { RecordedEvent } from '../store/types';
import { addWindow, judgeLater, stamp, type Batch } from './batch';
import { discrepancyId, type Finding, type SyncWindow } from './discrepancy-rules';
import { judgeWindowPayments } from './judge';
import type { DiscrepancyRow } from './discrepancies/columns';
import { applyFindings, recordAcceptance, recordRevocation } from './discrepancies/lifecycle';
import { observationOf, type Observation } from './observations';
import { addObservation, operationsOf, paymentKey, type PaymentState } from './payment-state';
import { register } from './sub-merchant-names';

/**
 * The events the reconciliation reads, each with two handlers: one to plan the batch (which payments and
 * tables it may touch, so that everything is loaded in a few queries before any event is applied), one to
 * evolve the batch's state. Every other event only moves the clock (see batch.ts).
 */

/** What a batch may touch, gathered before loading. */
export interface Plan {
  /** payments by key, in the order first asked for */
  readonly wanted: Map<string, readonly [posId: string, paymentId: string]>;
  readonly observed: Map<RecordedEvent, Observation>;
  readonly windows: Array<{ posId: string; from: string; to: string; reportId: string }>;
  /** receiver names whose sub-merchant may change, and the ids registered (their stored names join them) */
  readonly receiverNames: Set<string>;
  readonly registeredIds: string[];
  readonly acceptedIds: string[];
  /** the report-level discrepancies are loaded */
  reportLevel: boolean;
}

export function emptyPlan(): Plan {
  return {
    wanted: new Map(),
    observed: new Map(),
    windows: [],
    receiverNames: new Set(),
    registeredIds: [],
    acceptedIds: [],
    reportLevel: false,
  };
}

export function want(plan: Plan, posId: string, paymentId: string): void {
  const k = paymentKey(posId, paymentId);
  if (!plan.wanted.has(k)) plan.wanted.set(k, [posId, paymentId]);
}

const planObservation = (plan: Plan, e: RecordedEvent) => {
  const o = observationOf(e);
  if (o === null) return;
  plan.observed.set(e, o);
  want(plan, o.posId, o.paymentId);
};

export const planning = handlerTable<Plan>(
  onRecorded(RegisterRecordObserved, planObservation),
  onRecorded(PeriodRecordObserved, planObservation),
  onRecorded(WebhookReceived, planObservation),
  on(WebhookResendRequested, (plan, d) => want(plan, d.posId, d.paymentId)),
  on(SyncWindowCompleted, (plan, d) => {
    plan.windows.push({ posId: d.posId, from: d.window.from, to: d.window.to, reportId: d.reportId });
    plan.reportLevel = true;
  }),
  on(RegisterCountMismatched, (plan) => {
    plan.reportLevel = true;
  }),
  on(SubMerchantRegistered, (plan, d) => {
    plan.receiverNames.add(d.name.trim());
    plan.registeredIds.push(d.subMerchantId);
  }),
  on(DiscrepancyAccepted, (plan, d) => {
    plan.acceptedIds.push(d.discrepancyId);
    plan.reportLevel = true;
  }),
  // a revocation loads its discrepancy's payment like an acceptance (judged again once open)
  on(DiscrepancyAcceptanceRevoked, (plan, d) => {
    plan.acceptedIds.push(d.discrepancyId);
    plan.reportLevel = true;
  }),
);

const paymentOf = (b: Batch, posId: string, paymentId: string): PaymentState =>
  b.payments.get(paymentKey(posId, paymentId))!;

const evolveObservation = (b: Batch, e: RecordedEvent) => {
  const o = b.observed.get(e);
  if (o === undefined) return;
  const p = paymentOf(b, o.posId, o.paymentId);
  addObservation(p, o);
  p.rowsChanged = true;
  b.added.observations.push(o);
  judgeLater(b, p, e.id);
};

/** The completed window an event records. */
export const windowOf = (d: EventData<typeof SyncWindowCompleted>, eventId: string): SyncWindow => ({
  posId: d.posId,
  from: d.window.from,
  to: d.window.to,
  completedAt: d.completedAt,
  reportId: d.reportId,
  eventId,
});

/** A later report of the same window whose count matched resolves the window's count mismatches. */
function resolveCountMismatches(b: Batch, w: SyncWindow): void {
  const levels = [...b.reportLevel.values()];
  if (levels.some((r) => (r.values as { report_id?: string }).report_id === w.reportId)) return;
  const same = levels.filter((r) => {
    const v = r.values as { window?: { from: string; to: string } };
    return r.pos_id === w.posId && v.window?.from === w.from && v.window?.to === w.to;
  });
  applyFindings(b.lifecycle, new Map(same.map((r) => [r.id, r])), [], stamp(b, w.eventId), () => true);
}

function countMismatch(b: Batch, d: EventData<typeof RegisterCountMismatched>, eventId: string): void {
  const key = `report:${d.posId}:${d.reportId}`;
  const f: Finding = {
    id: discrepancyId('report_count_mismatch', key, null),
    type: 'report_count_mismatch',
    posId: d.posId,
    paymentId: null,
    orderId: null,
    method: null,
    operationKey: key,
    receiverName: null,
    subMerchantIds: [],
    currency: null,
    occurredAt: d.window.from,
    values: {
      report_id: d.reportId,
      window: d.window,
      announced_count: d.announcedCount,
      received_count: d.receivedCount,
    },
    evidence: [eventId],
  };
  const existing = new Map<string, DiscrepancyRow>();
  const known = b.reportLevel.get(f.id);
  if (known) existing.set(f.id, known);
  applyFindings(b.lifecycle, existing, [f], stamp(b, eventId), () => false);
  for (const [id, r] of existing) b.reportLevel.set(id, r);
}

/** A (re)named sub-merchant: payments with a receiver of either name get their receiver rows and judgement again. */
function subMerchantRegistered(b: Batch, id: string, name: string, eventId: string): void {
  const affected = register(b.names, id, name, eventId);
  for (const p of b.payments.values()) {
    if (!p.observations.some((o) => o.receiverName !== null && affected.has(o.receiverName))) continue;
    if (operationsOf(p).some((op) => op.register?.receivers.some((r) => affected.has(r.receiverName)))) {
      p.rowsChanged = true;
      judgeLater(b, p, eventId);
    }
  }
}

function findRow(b: Batch, id: string): DiscrepancyRow | undefined {
  const row = b.reportLevel.get(id);
  if (row) return row;
  for (const p of b.payments.values()) {
    const r = p.discrepancies.get(id);
    if (r) return r;
  }
  return undefined;
}

const evolvers: Handler<Batch>[] = [
  onRecorded(RegisterRecordObserved, evolveObservation),
  onRecorded(PeriodRecordObserved, evolveObservation),
  onRecorded(WebhookReceived, evolveObservation),
  on(WebhookResendRequested, (b, d, e) => {
    const p = paymentOf(b, d.posId, d.paymentId);
    const r = {
      posId: d.posId,
      paymentId: d.paymentId,
      method: d.operation,
      requestedAt: d.requestedAt,
      eventId: e.id,
    };
    p.resends.push(r);
    b.added.resends.push({ ...r, outcome: d.outcome });
    judgeLater(b, p, e.id);
  }),
  on(SyncWindowCompleted, (b, d, e) => {
    const w = windowOf(d, e.id);
    addWindow(b, w);
    b.added.windows.push(w);
    judgeWindowPayments(b, w, e.id);
    resolveCountMismatches(b, w);
  }),
  on(RegisterCountMismatched, (b, d, e) => countMismatch(b, d, e.id)),
  on(SubMerchantRegistered, (b, d, e) => subMerchantRegistered(b, d.subMerchantId, d.name, e.id)),
  on(DiscrepancyAccepted, (b, d, e) =>
    recordAcceptance(b.lifecycle, findRow(b, d.discrepancyId), { ...d, eventId: e.id }),
  ),
  on(DiscrepancyAcceptanceRevoked, (b, d, e) => revoke(b, d.discrepancyId, d.acceptance, e.id)),
];

/** An acceptance taken back: its row opens again and its payment is judged at the end of the append. */
function revoke(b: Batch, discrepancyId: string, acceptance: string, eventId: string): void {
  const row = findRow(b, discrepancyId);
  const v = { discrepancyId, acceptance, eventId };
  if (!recordRevocation(b.lifecycle, row, v, stamp(b, eventId)) || !row?.pos_id || !row.payment_id) return;
  const p = b.payments.get(paymentKey(row.pos_id, row.payment_id));
  if (p) judgeLater(b, p, eventId);
}

export const evolving = handlerTable<Batch>(...evolvers);

import { discrepancyId as coreId } from './discrepancies/id';
import type { Finding as CoreFinding } from './discrepancies/lifecycle';
import type { ReconciliationType } from './discrepancy-types';
import type { MatchedOperation, SourceItem } from './matching';
import { isFinal, SOURCES, type Observation, type SourceName } from './observations';

/**
 * Discrepancy rules: which discrepancies one payment's matched operations show at a given "now".
 * Pure: "now" is the time carried by the events (the projection's clock), never the wall clock.
 * An operation is judged only once it is older than the grace period (now ≥ occurredAt + grace).
 */

export interface SyncWindow {
  readonly posId: string;
  readonly from: string;
  readonly to: string;
  readonly completedAt: string;
  readonly reportId: string;
  readonly eventId: string;
}

export interface ResendRequest {
  readonly posId: string;
  readonly paymentId: string;
  readonly method: string;
  readonly requestedAt: string;
  readonly eventId: string;
}

export interface RuleContext {
  /** the projection's clock (ms), null before any timed event */
  readonly now: number | null;
  readonly graceMs: number;
  /** completed sync windows of the payment's posId */
  readonly windows: readonly SyncWindow[];
  /** webhook re-send requests of this payment */
  readonly resends: readonly ResendRequest[];
  /** sub-merchant directory: receiverName → sub_merchant_id */
  readonly subMerchantOf: (receiverName: string) => string | undefined;
  /** report ids of `windows` (a faster look-up than scanning them; built from them when absent) */
  readonly completedReports?: ReadonlySet<string>;
}

/**
 * A mature operation whose judgement of some types waits for a register or period report that has not
 * completed yet (see `awaitedReports`): `split` (split_mismatch: receiver rows may still be arriving) or
 * `missing` (missing_in_report / missing_in_period: the other source's records of the same sync may still be
 * arriving).
 */
export interface ReportWait {
  readonly operationKey: string;
  /** the report still awaited */
  readonly reportId: string;
  /** the awaiting row's dateTime: a later completed window covering it also ends the wait */
  readonly dateTime: string | null;
  readonly judges: 'split' | 'missing';
  /** when the clock alone ends the wait (ms: the row's observedAt + grace) */
  readonly until: number;
}

/** A discrepancy the rules see now (the core's lifecycle gives it status, times and row): the PSP's always name a POS. */
export type Finding = CoreFinding<ReconciliationType> & { readonly posId: string };

/** The id of the PSP's discrepancy of `type` on an operation (and receiver): its key in the core's id. */
export const discrepancyId = (type: ReconciliationType, operationKey: string, receiver: string | null): string =>
  coreId(type, `${operationKey}\n${receiver ?? ''}`);

const s = (v: bigint | null | undefined) => (v === null || v === undefined ? null : v.toString());

export function sourceValues(it: SourceItem | null): Record<string, unknown> | null {
  if (!it) return null;
  const v: Record<string, unknown> = {
    status: it.status,
    amount: s(it.amount),
    currency: it.currency,
    date_time: it.dateTime,
  };
  if (it.source === 'register') {
    v.gross_amount = s(it.grossAmount);
    v.customer_fee = s(it.customerFee);
    v.merchant_fee = s(it.merchantFee);
    if (it.receivers.length) {
      v.receivers = it.receivers.map((r) => ({
        receiver_name: r.receiverName,
        receiver_amount: s(r.receiverAmount),
        receiver_fee: s(r.receiverFee),
        reserve_amount: s(r.reserveAmount),
        share: s(r.share),
      }));
    }
  } else if (it.source === 'period') {
    v.customer_fee = s(it.customerFee);
    v.merchant_fee = s(it.merchantFee);
  } else {
    v.fee = s(it.merchantFee);
  }
  return v;
}

function perSource(op: MatchedOperation): Record<string, unknown> {
  return { register: sourceValues(op.register), period: sourceValues(op.period), webhook: sourceValues(op.webhook) };
}

const present = (op: MatchedOperation): SourceItem[] =>
  SOURCES.map((src) => op[src]).filter((x): x is SourceItem => x !== null);

const distinct = <T>(xs: T[]) => [...new Set(xs)];

/** The time at which an operation stops being "inside the grace period", in ms (null: unknown yet). */
export function matureAt(op: MatchedOperation, graceMs: number): number | null {
  return op.occurredAt === null ? null : Date.parse(op.occurredAt) + graceMs;
}

/**
 * The reports of these rows (current versions) that have not completed yet, with the row awaiting each: the
 * sync appends a report's rows (one per receiver, in pages), then the window's period records, then, after
 * all of them, a `SyncWindowCompleted` with the report's id; before it, what has been seen of the window is
 * partial. A row's report counts as complete when
 * - its `SyncWindowCompleted` has been applied;
 * - a later window of the same pos that covers the row's time has completed (`completedAt ≥` the row's
 *   `observedAt`): a sync killed or failed mid-report never completes its report, and its rerun reads the rows
 *   again under a new report id without appending them again (same content, same event id);
 * - or the clock has passed the row's `observedAt` + grace: a report that failed and was never synced again
 *   is not waited for forever.
 * Rows without a report id await nothing.
 */
export function awaitedReports(
  rows: readonly Observation[],
  ctx: Pick<RuleContext, 'now' | 'graceMs' | 'windows' | 'completedReports'>,
): Array<{ reportId: string; dateTime: string | null; until: number }> {
  let out: Array<{ reportId: string; dateTime: string | null; until: number }> | null = null;
  let done: ReadonlySet<string> | undefined = ctx.completedReports;
  for (const o of rows) {
    if (o.reportId === null || out?.some((x) => x.reportId === o.reportId && x.dateTime === o.dateTime)) continue;
    done ??= new Set(ctx.windows.map((w) => w.reportId));
    if (done.has(o.reportId)) continue;
    const seenMs = o.seenAt === null ? NaN : Date.parse(o.seenAt);
    const seen = Number.isNaN(seenMs) ? -Infinity : seenMs;
    const until = seen + ctx.graceMs;
    if (ctx.now !== null && ctx.now >= until) continue;
    const t = o.dateTime === null ? NaN : Date.parse(o.dateTime);
    const covered =
      !Number.isNaN(t) &&
      ctx.windows.some((w) => Date.parse(w.from) <= t && t < Date.parse(w.to) && Date.parse(w.completedAt) >= seen);
    if (!covered) (out ??= []).push({ reportId: o.reportId, dateTime: o.dateTime, until });
  }
  return out ?? [];
}

/** The rows whose reports an operation's split_mismatch waits for: its register receiver rows. */
const splitRows = (op: MatchedOperation): Observation[] => (op.register?.receivers ?? []).map((r) => r.row.current);

/**
 * The rows whose reports an operation's missing_in_* waits for: its register and period rows, when one of the
 * two is absent and some source has a final status (otherwise nothing can be missing).
 */
const missingRows = (op: MatchedOperation): Observation[] =>
  (op.register && op.period) || !present(op).some((i) => isFinal(i.status))
    ? []
    : [...(op.register?.rows ?? []), ...(op.period?.rows ?? [])].map((r) => r.current);

/** What the mature operations' judgements wait for (see `ReportWait`, `awaitedReports`). */
export function reportWaits(ops: readonly MatchedOperation[], ctx: RuleContext): ReportWait[] {
  const out: ReportWait[] = [];
  if (ctx.now === null) return out;
  for (const op of ops) {
    const mature = matureAt(op, ctx.graceMs);
    if (mature === null || ctx.now < mature) continue;
    for (const [judges, rows] of [
      ['split', splitRows(op)],
      ['missing', missingRows(op)],
    ] as const) {
      for (const a of awaitedReports(rows, ctx))
        out.push({ operationKey: op.key, reportId: a.reportId, dateTime: a.dateTime, judges, until: a.until });
    }
  }
  return out;
}

/** One mature operation as the rules see it at ctx.now. */
interface Judged {
  readonly op: MatchedOperation;
  readonly ctx: RuleContext & { readonly completedReports: ReadonlySet<string> };
  readonly now: number;
  readonly mature: number;
  readonly items: readonly SourceItem[];
  /** every event of the operation's items */
  readonly evidence: readonly string[];
  /** what each source said (built once, shared by the findings that carry nothing more) */
  perSource(): Record<string, unknown>;
  finding(
    type: ReconciliationType,
    receiver: string | null,
    values: Record<string, unknown>,
    evidence: readonly string[],
    idReceiver?: string | null,
  ): Finding;
}

function judged(op: MatchedOperation, ctx: Judged['ctx'], now: number, mature: number): Judged {
  const items = present(op);
  const subMerchantIds = distinct(
    (op.register?.receivers ?? [])
      .map((r) => ctx.subMerchantOf(r.receiverName))
      .filter((x): x is string => x !== undefined),
  ).sort();
  const currency = op.register?.currency ?? op.period?.currency ?? op.webhook?.currency ?? null;
  let values: Record<string, unknown> | undefined;
  return {
    op,
    ctx,
    now,
    mature,
    items,
    evidence: items.flatMap((i) => i.eventIds),
    perSource: () => (values ??= perSource(op)),
    finding: (type, receiver, values, evidence, idReceiver = receiver) => ({
      id: discrepancyId(type, op.key, idReceiver),
      type,
      posId: op.posId,
      paymentId: op.paymentId,
      orderId: op.orderId,
      method: op.method,
      operationKey: op.key,
      receiverName: receiver,
      subMerchantIds:
        receiver !== null ? [ctx.subMerchantOf(receiver)].filter((x): x is string => x !== undefined) : subMerchantIds,
      currency,
      occurredAt: op.occurredAt,
      values,
      evidence: distinct([...evidence]),
    }),
  };
}

/**
 * missing_in_report / missing_in_period: a window covering the operation was synced after it was older than the
 * grace; judged only once the reports of the operation's rows are complete (the sync appends a window's register
 * rows and its period records in separate appends: the one seen without the other is not missing yet).
 */
function missingInSources(j: Judged): Finding[] {
  const { op, ctx } = j;
  if (!j.items.some((i) => isFinal(i.status)) || awaitedReports(missingRows(op), ctx).length > 0) return [];
  const t = Date.parse(op.occurredAt!);
  const out: Finding[] = [];
  for (const [src, type] of [
    ['register', 'missing_in_report'],
    ['period', 'missing_in_period'],
  ] as const) {
    if (op[src]) continue;
    const w = ctx.windows.find(
      (w) => Date.parse(w.from) <= t && t < Date.parse(w.to) && Date.parse(w.completedAt) >= j.mature,
    );
    if (!w) continue;
    const window = { from: w.from, to: w.to, completed_at: w.completedAt, report_id: w.reportId };
    out.push(j.finding(type, null, { ...j.perSource(), window }, [...j.evidence, w.eventId]));
  }
  return out;
}

/**
 * missing_webhook: the PSP's data show a final operation older than the grace, and healing asked for a re-send
 * that has not arrived (yet): resolved when it does.
 */
function missingWebhook(j: Judged): Finding[] {
  const { op } = j;
  const pspFinal = [op.register, op.period].some((i) => i !== null && isFinal(i.status));
  if (op.webhook || !pspFinal) return [];
  const asked = j.ctx.resends.filter((r) => r.method === op.method && Date.parse(r.requestedAt) <= j.now);
  if (asked.length === 0) return [];
  const values = { ...j.perSource(), resend_requested_at: asked.map((r) => r.requestedAt) };
  return [j.finding('missing_webhook', null, values, [...j.evidence, ...asked.map((r) => r.eventId)])];
}

const differs = (a: bigint | null | undefined, b: bigint | null | undefined) => a != null && b != null && a !== b;

/** status, amount, currency and fee mismatches: the sources present disagree. */
function sourcesDisagree(j: Judged): Finding[] {
  const { items } = j;
  if (items.length < 2) return [];
  const out: Finding[] = [];
  if (distinct(items.map((i) => i.status)).length > 1)
    out.push(j.finding('status_mismatch', null, j.perSource(), j.evidence));
  const amounts = items.filter((i) => i.amount !== null).map((i) => i.amount!.toString());
  if (distinct(amounts).length > 1) out.push(j.finding('amount_mismatch', null, j.perSource(), j.evidence));
  if (distinct(items.map((i) => i.currency)).length > 1)
    out.push(j.finding('currency_mismatch', null, j.perSource(), j.evidence));
  const { register: r, period: p, webhook: w } = j.op;
  if (
    (r && p && (differs(r.customerFee, p.customerFee) || differs(r.merchantFee, p.merchantFee))) ||
    (r && w && differs(w.merchantFee, r.merchantFee))
  )
    out.push(j.finding('fee_mismatch', null, j.perSource(), j.evidence));
  return out;
}

/** split_mismatch: judged only once the report the receiver rows came from is complete (no transient mismatch mid-report). */
function splitMismatch(j: Judged): Finding[] {
  const r = j.op.register;
  if (!r || r.receivers.length === 0 || r.amount === null || awaitedReports(splitRows(j.op), j.ctx).length > 0)
    return [];
  const sum = r.receivers.reduce((a, x) => a + x.share, 0n);
  if (sum === r.amount) return [];
  const values = { ...j.perSource(), shares_sum: sum.toString(), original_amount: r.amount.toString() };
  return [j.finding('split_mismatch', null, values, r.eventIds)];
}

function unknownSubMerchant(j: Judged): Finding[] {
  return (j.op.register?.receivers ?? [])
    .filter((rc) => j.ctx.subMerchantOf(rc.receiverName) === undefined)
    .map((rc) =>
      j.finding(
        'unknown_sub_merchant',
        rc.receiverName,
        { ...j.perSource(), receiver_name: rc.receiverName },
        rc.row.versions.map((v) => v.eventId),
      ),
    );
}

const rowValues = (v: Observation) => ({
  event_id: v.eventId,
  report_id: v.reportId,
  status: v.status,
  amount: s(v.amount),
  gross_amount: s(v.grossAmount),
  customer_fee: s(v.customerFee),
  merchant_fee: s(v.merchantFee),
  receiver_amount: s(v.receiverAmount),
  receiver_fee: s(v.receiverFee),
  reserve_amount: s(v.reserveAmount),
  currency: v.currency,
  date_time: v.dateTime,
});

/** duplicate: one source gave two different rows of the same operation and receiver in one report. */
function duplicates(j: Judged): Finding[] {
  const out: Finding[] = [];
  for (const src of SOURCES) {
    for (const row of j.op[src]?.rows ?? []) {
      if (row.duplicates.size === 0) continue;
      const receiver = row.current.receiverName;
      const versions: Observation[] = [...row.duplicates.values()].flat();
      const values = {
        ...j.perSource(),
        source: src,
        receiver_name: receiver,
        report_ids: [...row.duplicates.keys()].sort(),
        rows: versions.map(rowValues),
      };
      out.push(
        j.finding(
          'duplicate',
          receiver,
          values,
          versions.map((v) => v.eventId),
          `${src}:${receiver ?? ''}`,
        ),
      );
    }
  }
  return out;
}

/** The rules, in the order their findings are listed. */
const RULES: ReadonlyArray<(j: Judged) => Finding[]> = [
  missingInSources,
  missingWebhook,
  sourcesDisagree,
  splitMismatch,
  unknownSubMerchant,
  duplicates,
];

/** Findings of one payment's operations at ctx.now. */
export function findDiscrepancies(ops: readonly MatchedOperation[], ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  if (ctx.now === null) return out;
  const rules = { ...ctx, completedReports: ctx.completedReports ?? new Set(ctx.windows.map((w) => w.reportId)) };
  for (const op of ops) {
    const mature = matureAt(op, ctx.graceMs);
    if (mature === null || ctx.now < mature) continue;
    const j = judged(op, rules, ctx.now, mature);
    for (const rule of RULES) out.push(...rule(j));
  }
  return out;
}

/** The next time (ms, after now) at which this payment's findings may change with the clock alone (a wait's end included). */
export function nextDue(
  ops: readonly MatchedOperation[],
  resends: readonly ResendRequest[],
  now: number | null,
  graceMs: number,
  waits: readonly ReportWait[] = [],
): number | null {
  const times: number[] = [];
  for (const op of ops) {
    const m = matureAt(op, graceMs);
    if (m !== null) times.push(m);
  }
  for (const r of resends) times.push(Date.parse(r.requestedAt));
  for (const w of waits) times.push(w.until);
  const future = times.filter((t) => now === null || t > now);
  return future.length ? Math.min(...future) : null;
}

export type { SourceName };

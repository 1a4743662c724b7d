import type { Sql } from '../../db/connect';
import { isEvent } from '../../events/catalog';
import {
  PeriodRecordObserved,
  paymentStream,
  RegisterRecordObserved,
  WebhookReceived,
} from '../../events/ingest-events';
import { isPlainObject, parseJsonExact } from '../../psp/json';
import { feeObject } from '../../psp/schemas';
import type { BatchStep } from './read-ahead';
import { readStreamsAt } from '../../store/read-streams-at';
import type { EventStore, Position, RecordedEvent } from '../../store/types';

/**
 * What a statement line tells besides its figures, read from the payment's recorded events as they stood at
 * the statement's cut (so a replay gives the same words): how the customer paid, and the fixed and percentage
 * parts of the line's fee where the PSP stated them.
 */
export interface PaidWith {
  /** the PSP's payway (card, apple_pay, ...), null when no recorded event gives one */
  readonly payway: string | null;
  /** the card scheme (paymentSystem: visa, mastercard, ...), null when none is given */
  readonly scheme: string | null;
}

export interface FeeParts {
  readonly fixed: bigint;
  readonly percent: bigint;
}

export interface LineDetails {
  readonly paidWith: PaidWith | null;
  /** present only when the parts the PSP stated add up to exactly this line's fee */
  readonly feeParts: FeeParts | null;
}

/**
 * Events are read field by field rather than through their schemas: a statement must not fail because an event
 * stored long ago does not meet a schema made stricter since; what cannot be read is simply not shown.
 */
const field = (v: unknown, key: string): unknown =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[key] : undefined;

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

function lastOf<T>(items: readonly T[], pick: (x: T) => string | null): string | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const v = pick(items[i] as T);
    if (v !== null) return v;
  }
  return null;
}

/**
 * The payway comes first from the payment's primary webhook (what the customer chose at checkout), then from
 * the line's own register rows; the scheme from the period records (their paymentSystem), then the register rows.
 */
function paidWithOf(events: readonly RecordedEvent[], eventIds: readonly string[]): PaidWith | null {
  const own = new Set(eventIds);
  const primary = events
    .filter((e) => isEvent(WebhookReceived, e))
    .map((e) => field(e.data, 'webhook'))
    .filter((w) => field(w, 'kind') === 'primary' || field(w, 'kind') === 'recurring');
  const registers = events
    .filter((e) => isEvent(RegisterRecordObserved, e))
    .map((e) => ({ own: own.has(e.id), record: field(e.data, 'record') }));
  const ownRows = registers.filter((r) => r.own);
  const periods = events.filter((e) => isEvent(PeriodRecordObserved, e)).map((e) => field(e.data, 'record'));
  const payway =
    lastOf(primary, (w) => text(field(field(w, 'other'), 'payway'))) ??
    lastOf(ownRows, (r) => text(field(r.record, 'payway'))) ??
    lastOf(registers, (r) => text(field(r.record, 'payway')));
  const scheme =
    lastOf(periods, (p) => text(field(field(p, 'other'), 'paymentSystem'))) ??
    lastOf(ownRows, (r) => text(field(field(r.record, 'other'), 'paymentSystem'))) ??
    lastOf(registers, (r) => text(field(field(r.record, 'other'), 'paymentSystem')));
  return payway === null && scheme === null ? null : { payway, scheme };
}

/** An amount of a webhook's fee object read exactly from the webhook's recorded text (its `other` copy is a JS number). */
function feeAmount(obj: Record<string, unknown>, field: string, currency: string): bigint | null {
  const r = feeObject.safeParse(obj[field]);
  if (!r.success || r.data.amount == null) return null;
  const c = r.data.currency;
  if (c !== null && c !== undefined && c !== '' && c !== currency) return null;
  return r.data.amount.minor;
}

/**
 * The fee parts of a line: the last successful webhook of the line's operation whose fee (section 2.7) equals the
 * line's fee and whose fixed_fee and percent_fee add up to it exactly. The webhook states the fee of the whole
 * payment; when it equals this line's fee, the other receivers of the payment paid none, so the parts are this
 * line's. Anything else gives no parts: the line shows its total only.
 */
function feePartsOf(
  events: readonly RecordedEvent[],
  line: { readonly method: string; readonly fee: bigint; readonly currency: string },
): FeeParts | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as RecordedEvent;
    if (!isEvent(WebhookReceived, e)) continue;
    const raw = field(e.data, 'raw');
    const webhook = field(e.data, 'webhook');
    const fee = field(webhook, 'fee');
    if (field(webhook, 'method') !== line.method || field(webhook, 'status') !== 'success') continue;
    if (typeof raw !== 'string' || typeof fee !== 'string' || !/^-?\d{1,18}$/.test(fee)) continue;
    const feeCurrency = field(webhook, 'feeCurrency') ?? line.currency;
    if (field(webhook, 'currency') !== line.currency || feeCurrency !== line.currency) continue;
    if (BigInt(fee) !== line.fee) return null;
    const parsed = parseJsonExact(raw);
    if (!parsed.ok || !isPlainObject(parsed.value)) return null;
    const fixed = feeAmount(parsed.value, 'fixed_fee', line.currency);
    const percent = feeAmount(parsed.value, 'percent_fee', line.currency);
    if (fixed === null || percent === null || fixed + percent !== line.fee) return null;
    return { fixed, percent };
  }
  return null;
}

export function lineDetailsOf(
  events: readonly RecordedEvent[],
  line: {
    readonly method: string;
    readonly fee: bigint;
    readonly currency: string;
    readonly eventIds: readonly string[];
  },
): LineDetails {
  return { paidWith: paidWithOf(events, line.eventIds), feeParts: feePartsOf(events, line) };
}

/** The recorded events at or before a cut of a batch of payments, each payment's for every POS that booked it. */
export type PaymentEvents = (paymentIds: readonly string[]) => Promise<ReadonlyMap<string, readonly RecordedEvent[]>>;

/**
 * Two reads a batch, whatever its size: the POS ids that booked each payment (one query), then every one of
 * their streams (one read). A payment's events are its streams' in POS id order, as PostgreSQL sorts them.
 */
export function storePaymentEvents(sql: Sql, store: EventStore, cut: Position): PaymentEvents {
  return async (paymentIds) => {
    const ids = [...new Set(paymentIds)];
    const out = new Map<string, RecordedEvent[]>();
    if (ids.length === 0) return out;
    const pos = await sql<{ payment_id: string; pos_id: string }[]>`
      select distinct payment_id, pos_id from recon.journal_entries where payment_id = any(${ids}::text[])
      order by payment_id, pos_id`;
    const events = await readStreamsAt(
      store,
      pos.map((r) => paymentStream(r.pos_id, r.payment_id)),
      cut,
    );
    for (const id of ids) out.set(id, []);
    for (const r of pos) out.get(r.payment_id)?.push(...(events.get(paymentStream(r.pos_id, r.payment_id)) ?? []));
    return out;
  };
}

/** The lines whose details are read together: their payments' events are read in one batch. */
const LINES_PER_BATCH = 1000;

type DetailedLine = { method: string; fee: bigint; eventIds: readonly string[]; paymentId: string };

/**
 * The details of one statement's lines, read once and kept for every pass over them (Operations, Audit, PDF):
 * only the small result is kept per line (ways of payment are shared), never the events, so a statement of
 * 100k lines holds a few megabytes. For each currency, the step that gives a batch of lines their details
 * (read-ahead.ts applies it `batch` lines at a time), their payments' events read in one batch.
 */
export function statementLineDetails(events: PaymentEvents, batch = LINES_PER_BATCH) {
  const known = new Map<string, LineDetails>();
  const ways = new Map<string, PaidWith>();
  const keyOf = (l: DetailedLine & { entryId?: string }, currency: string) =>
    l.entryId ?? `${currency}\u0000${l.paymentId}\u0000${l.method}\u0000${l.fee}\u0000${l.eventIds.join(' ')}`;
  const shared = (d: LineDetails): LineDetails => {
    if (!d.paidWith) return d;
    const k = `${d.paidWith.payway}\u0000${d.paidWith.scheme}`;
    const way = ways.get(k) ?? d.paidWith;
    ways.set(k, way);
    return { paidWith: way, feeParts: d.feeParts };
  };
  const fill = async (lines: readonly DetailedLine[], currency: string) => {
    const missing = lines.filter((l) => !known.has(keyOf(l, currency)));
    if (missing.length === 0) return;
    const byPayment = await events(missing.map((l) => l.paymentId));
    for (const l of missing)
      known.set(keyOf(l, currency), shared(lineDetailsOf(byPayment.get(l.paymentId) ?? [], { ...l, currency })));
  };
  return <L extends DetailedLine>(currency: string): BatchStep<L, L & LineDetails> => ({
    size: batch,
    async apply(lines) {
      await fill(lines, currency);
      return lines.map((l) => ({ ...l, ...known.get(keyOf(l, currency))! }));
    },
  });
}

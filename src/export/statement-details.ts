import type { Sql } from '../db/connect';
import { isEvent } from '../events/catalog';
import { PeriodRecordObserved, paymentStream, RegisterRecordObserved, WebhookReceived } from '../events/ingest-events';
import { isPlainObject, parseJsonExact } from '../psp/json';
import { feeObject } from '../psp/schemas';
import { comparePositions, type EventStore, type Position, type RecordedEvent } from '../store/types';

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

/** A payment's recorded events at or before a cut, for every POS that booked it. */
export type PaymentEvents = (paymentId: string) => Promise<readonly RecordedEvent[]>;

// a payment's refund is usually booked near its purchase: a bounded cache serves both without holding a month
const CACHED_PAYMENTS = 2000;

export function storePaymentEvents(sql: Sql, store: EventStore, cut: Position): PaymentEvents {
  const cache = new Map<string, Promise<readonly RecordedEvent[]>>();
  const read = async (paymentId: string) => {
    const pos = await sql<{ pos_id: string }[]>`
      select distinct pos_id from recon.journal_entries where payment_id = ${paymentId} order by pos_id`;
    const out: RecordedEvent[] = [];
    for (const { pos_id } of pos) {
      for (const e of await store.readStream(paymentStream(pos_id, paymentId))) {
        if (comparePositions(e.position, cut) <= 0) out.push(e);
      }
    }
    return out;
  };
  return (paymentId) => {
    let hit = cache.get(paymentId);
    if (hit) cache.delete(paymentId);
    else hit = read(paymentId);
    cache.set(paymentId, hit);
    if (cache.size > CACHED_PAYMENTS) cache.delete(cache.keys().next().value as string);
    return hit;
  };
}

/** A statement's lines, each with its details. */
export async function* withLineDetails<
  L extends { method: string; fee: bigint; eventIds: readonly string[]; paymentId: string },
>(lines: AsyncIterable<L>, currency: string, events: PaymentEvents): AsyncIterable<L & LineDetails> {
  for await (const l of lines) yield { ...l, ...lineDetailsOf(await events(l.paymentId), { ...l, currency }) };
}

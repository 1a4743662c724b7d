import type { OperationMethod } from '../events/ingest-events';
import { byPosition, isFinal, type Observation, type SourceName } from './observations';

/**
 * Matching the three sources of one payment into operations (pure functions, no I/O, no clock).
 *
 * 1. Observations are read from the payment's events (`observations.ts`).
 * 2. Each source's observations are consolidated into items (see `consolidate`): a later
 *    observation of the same row replaces the earlier one; two different rows of the same operation
 *    and receiver inside one report are a duplicate (the first row stays the one compared).
 * 3. Register rows of one operation (one per receiver) are grouped into one register item.
 * 4. Items are matched one-to-one into operations per method: register items are the first
 *    operations; then period items, then webhook items, each claim an operation that has no item of
 *    their source yet: first among operations with an equal amount, then among any; in each pass
 *    operations and items are paired keeping their order in time, with the least total time distance
 *    (`orderedPairs`). An unclaimed item starts an operation of its own. Orders are by (time, amount,
 *    first event position), so the result never depends on anything but the events.
 * 5. An operation is keyed by its time, not its rank (`operationKeys`).
 */

const timeMs = (t: string | null): number | null => (t === null ? null : Date.parse(t));

/** One row of one source after consolidation: its current version and everything that was seen. */
export interface SourceRow {
  readonly source: SourceName;
  /** the version compared with the other sources */
  current: Observation;
  /** every observation of this row, in commit order */
  readonly versions: Observation[];
  /** versions that differ from the first one inside one report: reportId → observations */
  readonly duplicates: Map<string, Observation[]>;
}

const compatibleTime = (a: string | null, b: string | null) => a === null || b === null || a === b;

/** Does `o` belong to the row whose latest version is `row.current`? */
function sameRow(row: SourceRow, o: Observation): boolean {
  const c = row.current;
  if (c.method !== o.method || c.receiverName !== o.receiverName) return false;
  if (o.source === 'webhook') {
    if (c.operationRef !== null && o.operationRef !== null) return c.operationRef === o.operationRef;
    return c.amount === o.amount;
  }
  // Inside one report: the same operation and receiver at the same time is the same row (a duplicate
  // when its values differ). Across reports: the same time, or the same amount when a time is missing.
  if (c.reportId !== null && c.reportId === o.reportId) return c.dateTime === o.dateTime;
  if (c.dateTime !== null && o.dateTime !== null) return c.dateTime === o.dateTime;
  return compatibleTime(c.dateTime, o.dateTime) && c.amount === o.amount;
}

/**
 * Does a webhook delivered later replace the current one? Deliveries get reordered: a non-final status never
 * replaces a final one, and of two final ones the one the PSP processed last (processed_at, else created_at)
 * is kept. When either time is unknown, or both are equal, the later delivery wins.
 */
function replaces(current: Observation, next: Observation): boolean {
  if (next.source !== 'webhook') return true;
  if (!isFinal(current.status)) return true;
  if (!isFinal(next.status)) return false;
  const tc = timeMs(current.dateTime);
  const tn = timeMs(next.dateTime);
  if (tc === null || tn === null || Number.isNaN(tc) || Number.isNaN(tn)) return true;
  return tn >= tc;
}

/** Consolidates one source's observations (any order) into rows. */
export function consolidate(observations: readonly Observation[]): SourceRow[] {
  const rows: SourceRow[] = [];
  for (const o of [...observations].sort(byPosition)) {
    const row = rows.find((r) => r.source === o.source && sameRow(r, o));
    if (!row) {
      rows.push({ source: o.source, current: o, versions: [o], duplicates: new Map() });
      continue;
    }
    row.versions.push(o);
    const inReport = o.reportId !== null && row.versions.some((v) => v !== o && v.reportId === o.reportId);
    if (inReport) {
      // A second row of one operation and receiver in one report: a duplicate. Its content differs from
      // the first in some field (card mask, codes, amounts...): identical rows share their event id and
      // are stored once. The first row stays the one compared with the other sources.
      const list = row.duplicates.get(o.reportId!) ?? row.versions.filter((v) => v !== o && v.reportId === o.reportId);
      list.push(o);
      row.duplicates.set(o.reportId!, list);
      continue;
    }
    if (replaces(row.current, o)) row.current = o;
  }
  return rows;
}

export interface Receiver {
  readonly receiverName: string;
  readonly receiverAmount: bigint | null;
  readonly receiverFee: bigint | null;
  readonly reserveAmount: bigint | null;
  /** receiverAmount + receiverFee */
  readonly share: bigint;
  readonly row: SourceRow;
}

/**
 * One source's view of one operation: the values of its latest observation (see `itemOf`; orderId, the
 * first one given), with the rows and events behind it.
 */
export interface SourceItem
  extends Pick<
    Observation,
    | 'source'
    | 'method'
    | 'status'
    | 'currency'
    | 'amount'
    | 'grossAmount'
    | 'customerFee'
    | 'merchantFee'
    | 'dateTime'
    | 'orderId'
  > {
  /** register split rows (empty for a marketplace-own operation and for the other sources) */
  readonly receivers: readonly Receiver[];
  readonly rows: readonly SourceRow[];
  /** every event id behind this item, in commit order */
  readonly eventIds: readonly string[];
  readonly firstCommit: bigint;
  readonly firstPrepare: bigint;
}

/** A register split row's receiver (a row of the item's `receivers`). */
const receiverOf = (r: SourceRow): Receiver => ({
  receiverName: r.current.receiverName!,
  receiverAmount: r.current.receiverAmount,
  receiverFee: r.current.receiverFee,
  reserveAmount: r.current.reserveAmount,
  share: (r.current.receiverAmount ?? 0n) + (r.current.receiverFee ?? 0n),
  row: r,
});

const byReceiverName = (a: Receiver, b: Receiver) =>
  a.receiverName < b.receiverName ? -1 : a.receiverName > b.receiverName ? 1 : 0;

function itemOf(source: SourceName, rows: SourceRow[]): SourceItem {
  // the latest current version (the last of equals, as a stable sort by position would leave it)
  let latest = rows[0]!.current;
  for (let i = 1; i < rows.length; i++) if (byPosition(rows[i]!.current, latest) >= 0) latest = rows[i]!.current;
  // one row's versions are already in commit order (consolidate adds them so)
  const all = rows.length === 1 ? rows[0]!.versions : rows.flatMap((r) => r.versions).sort(byPosition);
  const first = all[0]!;
  const ids = new Set<string>();
  let orderId: string | null = null;
  for (const o of all) {
    ids.add(o.eventId);
    if (orderId === null && o.orderId !== null) orderId = o.orderId;
  }
  const receivers: Receiver[] = [];
  for (const r of rows) if (r.current.receiverName !== null) receivers.push(receiverOf(r));
  return {
    source,
    method: latest.method,
    status: latest.status,
    currency: latest.currency,
    amount: latest.amount,
    grossAmount: latest.grossAmount,
    customerFee: latest.customerFee,
    merchantFee: latest.merchantFee,
    dateTime: latest.dateTime,
    orderId,
    receivers: receivers.sort(byReceiverName),
    rows,
    eventIds: [...ids],
    firstCommit: first.commit,
    firstPrepare: first.prepare,
  };
}

/** Groups consolidated rows of one source into items: register split rows of one operation share method, time and amount. */
export function itemsOf(source: SourceName, rows: readonly SourceRow[]): SourceItem[] {
  if (source !== 'register') return rows.map((r) => itemOf(source, [r]));
  const groups = new Map<string, SourceRow[]>();
  for (const r of rows) {
    const k = `${r.current.method}|${r.current.dateTime ?? ''}|${r.current.amount ?? ''}`;
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }
  return [...groups.values()].map((g) => itemOf(source, g));
}

export interface MatchedOperation {
  readonly posId: string;
  readonly paymentId: string;
  readonly method: OperationMethod;
  /** 0-based rank among the payment's operations of this method */
  readonly ordinal: number;
  /** `<posId>:<paymentId>:<method>:<occurred_at>` (`#1`, `#2`… for later operations at the same instant; see `operationKeys`) */
  readonly key: string;
  readonly orderId: string | null;
  /** register dateTime ?? period dateTime ?? webhook time ?? first seen */
  readonly occurredAt: string | null;
  readonly register: SourceItem | null;
  readonly period: SourceItem | null;
  readonly webhook: SourceItem | null;
}

function compareItems(a: SourceItem, b: SourceItem): number {
  return compareAt(a.dateTime, a, b.dateTime, b);
}

/** compareItems with the items' times given apart (an operation is ordered by its own time). */
function compareAt(timeA: string | null, a: SourceItem, timeB: string | null, b: SourceItem): number {
  const ta = timeMs(timeA) ?? Number.MAX_SAFE_INTEGER;
  const tb = timeMs(timeB) ?? Number.MAX_SAFE_INTEGER;
  if (ta !== tb) return ta - tb;
  const aa = a.amount ?? -1n;
  const ab = b.amount ?? -1n;
  if (aa !== ab) return aa < ab ? -1 : 1;
  if (a.firstCommit !== b.firstCommit) return a.firstCommit < b.firstCommit ? -1 : 1;
  return a.firstPrepare < b.firstPrepare ? -1 : a.firstPrepare > b.firstPrepare ? 1 : 0;
}

type Slot = { register: SourceItem | null; period: SourceItem | null; webhook: SourceItem | null };

const anchorOf = (s: Slot): SourceItem => (s.register ?? s.period ?? s.webhook)!;

/**
 * Pairs every element of the shorter of two ordered lists with one of the longer, keeping both orders (the
 * i-th paired element of one list is paired with the i-th paired element of the other), with the fewest
 * pairs of unknown time distance, then the least total time distance. Ties go to the earlier partner.
 * `dist(i, j)`: distance of short[i] and long[j] in ms, null when a time is unknown. Returns [short, long] index pairs.
 *
 * On a line, a pairing that keeps both orders is always among the shortest in total (two crossed pairs are
 * never shorter than the same pairs uncrossed), so this is the least total distance of any one-to-one
 * pairing; unlike taking the nearest pairs first, it never crosses two operations whose items all lag
 * (webhook processed_at a few seconds after the register time).
 */
function orderedPairs(
  shortLen: number,
  longLen: number,
  dist: (i: number, j: number) => number | null,
): Array<[number, number]> {
  const w = longLen + 1;
  // f[i][j]: best cost of pairing short[i..] with long[j..] — [unknown pairs, total distance]
  const unknown = new Float64Array((shortLen + 1) * w);
  const total = new Float64Array((shortLen + 1) * w);
  const take = new Uint8Array((shortLen + 1) * w);
  for (let i = shortLen - 1; i >= 0; i--) {
    for (let j = longLen - (shortLen - i); j >= 0; j--) {
      const d = dist(i, j);
      const tu = unknown[(i + 1) * w + j + 1]! + (d === null ? 1 : 0);
      const tt = total[(i + 1) * w + j + 1]! + (d ?? 0);
      const k = i * w + j;
      // skipping long[j] is possible only while enough of the long list is left
      const canSkip = longLen - (j + 1) >= shortLen - i;
      if (canSkip) {
        const su = unknown[k + 1]!;
        const st = total[k + 1]!;
        if (su < tu || (su === tu && st < tt)) {
          unknown[k] = su;
          total[k] = st;
          continue;
        }
      }
      unknown[k] = tu;
      total[k] = tt;
      take[k] = 1;
    }
  }
  const out: Array<[number, number]> = [];
  for (let i = 0, j = 0; i < shortLen; j++) {
    if (take[i * w + j]) out.push([i++, j]);
  }
  return out;
}

function timeDistance(a: SourceItem, b: SourceItem): number | null {
  const ta = timeMs(a.dateTime);
  const tb = timeMs(b.dateTime);
  return ta === null || tb === null || Number.isNaN(ta) || Number.isNaN(tb) ? null : Math.abs(ta - tb);
}

// The helpers of `claim` and `matchMethod` are module functions, not closures made at each call: a payment is
// matched at every judgement, and each closure made per call costs an allocation (and, under tsx's keepNames,
// a property definition naming it) — a tenth of the matching's time.

const amountKey = (a: bigint | null) => (a === null ? '' : a.toString());

/** The slots that have no item of `source` yet, in order of their anchor item. */
function openSlots(slots: readonly Slot[], source: SourceName): number[] {
  const out: number[] = [];
  for (let si = 0; si < slots.length; si++) if (!slots[si]![source]) out.push(si);
  return out.sort((x, y) => compareItems(anchorOf(slots[x]!), anchorOf(slots[y]!)) || x - y);
}

/** Indexes grouped by a key, each group in the order given. */
function groupedBy(indexes: readonly number[], keyOf: (i: number) => string): Map<string, number[]> {
  const by = new Map<string, number[]>();
  for (const i of indexes) {
    const k = keyOf(i);
    const list = by.get(k);
    if (list) list.push(i);
    else by.set(k, [i]);
  }
  return by;
}

/** Pairs these open slots with these free items (`orderedPairs`, the shorter list all paired); taken items leave `free`. */
function pairUp(
  slots: Slot[],
  items: readonly SourceItem[],
  source: SourceName,
  free: Set<number>,
  slotIdx: readonly number[],
  itemIdx: readonly number[],
): void {
  if (slotIdx.length === 0 || itemIdx.length === 0) return;
  const slotsShort = slotIdx.length <= itemIdx.length;
  const short = slotsShort ? slotIdx : itemIdx;
  const long = slotsShort ? itemIdx : slotIdx;
  const pairs = orderedPairs(short.length, long.length, (i, j) =>
    timeDistance(anchorOf(slots[slotsShort ? short[i]! : long[j]!]!), items[slotsShort ? long[j]! : short[i]!]!),
  );
  for (const [i, j] of pairs) {
    const ii = slotsShort ? long[j]! : short[i]!;
    slots[slotsShort ? short[i]! : long[j]!]![source] = items[ii]!;
    free.delete(ii);
  }
}

/**
 * The items of one source (sorted by compareItems) claim the operations that have no item of that source
 * yet: first among operations with an equal amount, then among any; in each pass the operations (in order
 * of their anchor item) and the items are paired keeping their order in time (`orderedPairs`). An item
 * left over starts an operation of its own.
 */
function claim(slots: Slot[], items: SourceItem[], source: SourceName): void {
  const free = new Set(items.keys());
  // first pass: per amount (null amounts together)
  const slotsBy = groupedBy(openSlots(slots, source), (si) => amountKey(anchorOf(slots[si]!).amount));
  const itemsBy = groupedBy(
    [...free].sort((a, b) => a - b),
    (ii) => amountKey(items[ii]!.amount),
  );
  for (const [k, slotIdx] of slotsBy) pairUp(slots, items, source, free, slotIdx, itemsBy.get(k) ?? []);
  // second pass: whatever is left, any amount
  pairUp(
    slots,
    items,
    source,
    free,
    openSlots(slots, source),
    [...free].sort((a, b) => a - b),
  );
  for (const ii of [...free].sort((a, b) => a - b))
    slots.push({ register: null, period: null, webhook: null, [source]: items[ii]! });
}

/** One source's items of one method's observations, sorted by compareItems. */
function sourceItems(observations: readonly Observation[], source: SourceName): SourceItem[] {
  return itemsOf(source, consolidate(observations.filter((o) => o.source === source))).sort(compareItems);
}

/** Matches every observation of one payment into operations (deterministic; see the module comment). */
export function matchPayment(observations: readonly Observation[]): MatchedOperation[] {
  if (observations.length === 0) return [];
  const methods = [...new Set(observations.map((o) => o.method))].sort();
  if (methods.length === 1) return matchMethod(observations);
  return methods.flatMap((method) => matchMethod(observations.filter((o) => o.method === method)));
}

/**
 * The operations of one payment and one method, from that method's observations only (a payment's
 * operations are those of its methods, in method order: `matchPayment`). A new observation changes
 * only its own method's operations.
 */
export function matchMethod(observations: readonly Observation[]): MatchedOperation[] {
  if (observations.length === 0) return [];
  const posId = observations[0]!.posId;
  const paymentId = observations[0]!.paymentId;
  const method = observations[0]!.method;
  const out: MatchedOperation[] = [];
  {
    const slots: Slot[] = sourceItems(observations, 'register').map((r) => ({
      register: r,
      period: null,
      webhook: null,
    }));
    claim(slots, sourceItems(observations, 'period'), 'period');
    claim(slots, sourceItems(observations, 'webhook'), 'webhook');
    const ordered = slots
      .map((s) => ({
        s,
        anchor: anchorOf(s),
        time: s.register?.dateTime ?? s.period?.dateTime ?? s.webhook?.dateTime ?? null,
      }))
      .sort((a, b) => compareAt(a.time, a.anchor, b.time, b.anchor));
    const timed = ordered.map(({ s, time }) => {
      const items = [s.register, s.period, s.webhook].filter((x): x is SourceItem => x !== null);
      let firstSeen: string | undefined;
      if (time === null) {
        const ids = new Set(items.flatMap((it) => it.eventIds));
        for (const o of observations)
          if (o.seenAt !== null && ids.has(o.eventId) && (firstSeen === undefined || o.seenAt < firstSeen))
            firstSeen = o.seenAt;
      }
      return { s, items, occurredAt: time ?? firstSeen ?? null };
    });
    const keys = operationKeys(
      `${posId}:${paymentId}:${method}`,
      timed.map((x) => ({ occurredAt: x.occurredAt, anchor: anchorOf(x.s) })),
    );
    timed.forEach(({ s, items, occurredAt }, ordinal) => {
      out.push({
        posId,
        paymentId,
        method,
        ordinal,
        key: keys[ordinal]!,
        orderId: items.find((i) => i.orderId !== null)?.orderId ?? null,
        occurredAt,
        register: s.register,
        period: s.period,
        webhook: s.webhook,
      });
    });
  }
  return out;
}

/** timeKey's answers by spelling: a payment's times are keyed again at each of its judgements. */
const timeKeys = new Map<string, string>();

/** The operation's time as a key part: the instant in ISO form (any spelling of one instant gives one key). */
function timeKey(t: string | null): string {
  if (t === null) return 'unknown';
  let key = timeKeys.get(t);
  if (key === undefined) {
    const ms = Date.parse(t);
    key = Number.isNaN(ms) ? t : new Date(ms).toISOString();
    // bounded: a cache, never a store (the month's times are many)
    if (timeKeys.size >= 50_000) timeKeys.clear();
    timeKeys.set(t, key);
  }
  return key;
}

/**
 * Operation keys `<prefix>:<occurred_at>`: an operation is named by its own time (register dateTime, else
 * period, else webhook, else first seen), not by its rank among the payment's operations, so an earlier
 * operation reported late (a partial refund in a lookback sync) shifts no other operation's key — nor the ids
 * of its discrepancies, nor an auditor's acceptance of them. Operations of one method at the same instant are
 * told apart by when recon first saw the item that gives their time (register, else period, else webhook: its
 * first event, in commit order; a register item never moves to another operation): the first keeps the plain
 * key, the next ones get `#1`, `#2`… — so a later one never takes an earlier one's key, and a replay of the
 * log gives the same keys.
 */
function operationKeys(
  prefix: string,
  ops: ReadonlyArray<{ occurredAt: string | null; anchor: SourceItem }>,
): string[] {
  const base = ops.map((o) => `${prefix}:${timeKey(o.occurredAt)}`);
  const keys = [...base];
  const byBase = new Map<string, number[]>();
  base.forEach((k, i) => {
    const list = byBase.get(k);
    if (list) list.push(i);
    else byBase.set(k, [i]);
  });
  for (const list of byBase.values()) {
    if (list.length < 2) continue;
    const sorted = [...list].sort((x, y) => {
      const { firstCommit: cx, firstPrepare: px } = ops[x]!.anchor;
      const { firstCommit: cy, firstPrepare: py } = ops[y]!.anchor;
      return cx !== cy ? (cx < cy ? -1 : 1) : px !== py ? (px < py ? -1 : 1) : x - y;
    });
    sorted.forEach((i, n) => {
      if (n > 0) keys[i] = `${base[i]}#${n}`;
    });
  }
  return keys;
}

import { type HoldPolicy, holdPolicyFromEnv, holdRuleOf } from '../config/hold-policy';
import { DateTime } from 'luxon';
import type postgres from 'postgres';
import type { Sql } from '../db/connect';
import { isSqlState } from '../db/errors';
import { newEvent } from '../events/catalog';
import { type Decision, DiscrepancyAccepted, discrepancyStream } from '../events/audit-events';
import { DEFAULT_WRITE_OFF_ACCOUNT } from '../config/write-off';
import {
  decisionIdOf,
  decisionInForce,
  decisionRefusal,
  nextRevisionOf,
  releasedByPay,
  releasedBy,
  splitSeen,
  writeOffOf,
} from './decisions';
import { amountInDoubt } from './discrepancies/amounts';
import { isStoreError } from '../store/errors';
import type { AppendRequest, EventStore } from '../store/types';
import {
  DISCREPANCY_COLUMN_NAMES,
  DISCREPANCY_SELECT_LIST,
  type SinceAccepted,
  sinceAccepted,
} from './discrepancies/columns';
import { DISCREPANCY_VIEW_OF } from './discrepancies/table';
import { moneyText } from './discrepancy-summary';
import { DISCREPANCY_STATUSES, DISCREPANCY_TYPES, type DiscrepancyRecord } from './discrepancy-types';

export type { DiscrepancyRecord } from './discrepancy-types';
export {
  CSV_COLUMNS,
  DISCREPANCY_SORTS,
  csvCell,
  discrepanciesCsv,
  discrepanciesTable,
  discrepancyJson,
  sortDiscrepancies,
  subMerchantsOf,
  type DiscrepancySort,
} from './discrepancy-listing';

/**
 * Auditors' queries over the `recon.*` views of the reconciliation projection, shared by the CLI
 * (recon discrepancies, recon explain) and the auditor HTTP API.
 */

export interface DiscrepancyFilter {
  /** first local day (YYYY-MM-DD, RECON_TIMEZONE) of the operation's time */
  readonly from?: string | undefined;
  /** last local day, inclusive */
  readonly to?: string | undefined;
  readonly type?: string | undefined;
  readonly status?: string | undefined;
  readonly subMerchantId?: string | undefined;
  readonly paymentId?: string | undefined;
  readonly timezone: string;
  /** at most this many rows, 1…MAX_LIMIT; none: every matching row (the CLI) */
  readonly limit?: number | undefined;
  /** skip this many rows of the order first (paging; 0 when none) */
  readonly offset?: number | undefined;
}

/**
 * The most rows one query may ask for with `limit`: the auditor API's page size at most (and its default),
 * so that one request cannot make the server hold an unbounded result in memory.
 */
export const MAX_LIMIT = 10_000;

/** A pool or a transaction: what a read of the views runs on. */
export type Reader = postgres.ISql<{ bigint: bigint }>;

export type QueryErrorCode = 'INVALID_FILTER' | 'NOT_PROJECTED';
export type QueryResult<T> = { ok: true; value: T } | { ok: false; code: QueryErrorCode; message: string };

/**
 * Every view of discrepancies, one per leg, each with the core's columns (discrepancies/table.ts
 * `DISCREPANCY_VIEW_OF`); every reader goes through `allDiscrepancies`.
 */
export const DISCREPANCY_VIEWS: readonly string[] = Object.values(DISCREPANCY_VIEW_OF).map((v) => `recon.${v}`);

/**
 * The union of DISCREPANCY_VIEWS as the SQL text of a FROM item (alias `discrepancies`), to nest in a query
 * with `sql.unsafe`. Only the views whose projection has gone live are read, so a database where one of them
 * was never built still answers; none at all reads the first, whose absence is NOT_PROJECTED. Stays SQL text
 * for the readers in src/export (the views are fixed names of this module, never input); this module's own
 * readers nest `discrepanciesFrom`.
 */
export async function allDiscrepancies(sql: Sql): Promise<string> {
  const views = await liveDiscrepancyViews(sql);
  return `(${views.map((v) => `select ${DISCREPANCY_SELECT_LIST} from ${v}`).join(' union all ')}) as discrepancies`;
}

/** The views of DISCREPANCY_VIEWS that are live, in their order; none at all: the first (its absence is NOT_PROJECTED). */
async function liveDiscrepancyViews(sql: Reader): Promise<string[]> {
  const live = await sql<{ v: string }[]>`
    select v from unnest(${DISCREPANCY_VIEWS as string[]}::text[]) with ordinality as x(v, n)
    where to_regclass(v) is not null order by n`;
  return live.length ? live.map((l) => l.v) : DISCREPANCY_VIEWS.slice(0, 1);
}

/**
 * `allDiscrepancies` as a fragment of a tagged query (views and columns named as identifiers), in an object so
 * that awaiting this does not run it.
 */
async function discrepanciesFrom(sql: Reader) {
  const selects = (await liveDiscrepancyViews(sql)).map(
    (v) => sql`select ${sql(DISCREPANCY_COLUMN_NAMES as string[])} from ${sql(v)}`,
  );
  const union = selects.slice(1).reduce((all, s) => sql`${all} union all ${s}`, selects[0]!);
  return { from: sql`(${union}) as discrepancies` };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function dayStart(day: string, zone: string): DateTime | null {
  if (!DAY.test(day)) return null;
  const d = DateTime.fromISO(day, { zone });
  return d.isValid ? d.startOf('day') : null;
}

const isoOrNull = (v: unknown): string | null =>
  v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v);

/** A row of a discrepancy view as auditors read it (JSON, CSV, the API). */
export function toRecord(r: Record<string, unknown>): DiscrepancyRecord {
  return {
    id: String(r.id),
    type: String(r.type),
    status: String(r.status),
    // a NULL stays null (it read "null", a string, in JSON)
    pos_id: (r.pos_id as string | null) ?? null,
    order_id: (r.order_id as string | null) ?? null,
    payment_id: (r.payment_id as string | null) ?? null,
    method: (r.method as string | null) ?? null,
    operation_key: String(r.operation_key),
    receiver_name: (r.receiver_name as string | null) ?? null,
    sub_merchant_id: (r.sub_merchant_id as string | null) ?? null,
    sub_merchant_ids: (r.sub_merchant_ids as string[] | null) ?? [],
    currency: (r.currency as string | null) ?? null,
    values: (r.values as Record<string, unknown>) ?? {},
    evidence: (r.evidence as string[] | null) ?? [],
    occurred_at: isoOrNull(r.occurred_at),
    detected_at: isoOrNull(r.detected_at),
    detected_by_event: String(r.detected_by_event),
    resolved_at: isoOrNull(r.resolved_at),
    resolved_by_event: isoOrNull(r.resolved_by_event),
    accepted_at: isoOrNull(r.accepted_at),
    accepted_by: (r.accepted_by as string | null) ?? null,
    accepted_note: (r.accepted_note as string | null) ?? null,
    accepted_by_event: isoOrNull(r.accepted_by_event),
    // only where it differs, so a record of any other discrepancy reads as before
    ...since(r),
  };
}

const since = (r: Record<string, unknown>): { since_accepted?: SinceAccepted } => {
  const s = sinceAccepted(r);
  return s ? { since_accepted: s } : {};
};

/** Checks a filter; the message names the field and what is expected. */
export function checkFilter(
  f: DiscrepancyFilter,
): { ok: true } | { ok: false; code: 'INVALID_FILTER'; message: string } {
  const bad = (message: string) => ({ ok: false as const, code: 'INVALID_FILTER' as const, message });
  if (f.from !== undefined && !dayStart(f.from, f.timezone))
    return bad(`from: expected a day YYYY-MM-DD, got ${JSON.stringify(f.from)}`);
  if (f.to !== undefined && !dayStart(f.to, f.timezone))
    return bad(`to: expected a day YYYY-MM-DD, got ${JSON.stringify(f.to)}`);
  if (f.from !== undefined && f.to !== undefined && f.from > f.to) return bad(`from (${f.from}) is after to (${f.to})`);
  if (f.type !== undefined && !(DISCREPANCY_TYPES as readonly string[]).includes(f.type))
    return bad(`type: expected one of ${DISCREPANCY_TYPES.join(', ')}, got ${JSON.stringify(f.type)}`);
  if (f.status !== undefined && !(DISCREPANCY_STATUSES as readonly string[]).includes(f.status))
    return bad(`status: expected one of ${DISCREPANCY_STATUSES.join(', ')}, got ${JSON.stringify(f.status)}`);
  // bounded here, not by PostgreSQL: a limit beyond its bigint (or any number not exact in JS) failed in the query (a 500)
  if (f.limit !== undefined && (!Number.isInteger(f.limit) || f.limit < 1 || f.limit > MAX_LIMIT))
    return bad(`limit: expected a whole number from 1 to ${MAX_LIMIT}`);
  if (f.offset !== undefined && (!Number.isSafeInteger(f.offset) || f.offset < 0))
    return bad(`offset: expected a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`);
  return { ok: true };
}

export async function guardView<T>(fn: () => Promise<T>): Promise<QueryResult<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (e) {
    if (isSqlState(e, 'undefinedTable') || (e as { code?: string }).code === '3F000') {
      return {
        ok: false,
        code: 'NOT_PROJECTED',
        message: 'the reconciliation or payouts views do not exist yet: run `recon project` first',
      };
    }
    // a view an earlier version of recon built, without a column this version reads: live until the
    // projections are rebuilt (a version bump rebuilds them at the next `recon project` or `recon start`)
    if (isSqlState(e, 'undefinedColumn')) {
      return {
        ok: false,
        code: 'NOT_PROJECTED',
        message: `the read models were built by an earlier version of recon (${(e as Error).message}): run \`recon project\` to rebuild them`,
      };
    }
    throw e;
  }
}

/**
 * Discrepancies matching the filter, oldest operation first (then type, id: a total order, so pages of
 * `offset`/`limit` neither overlap nor leave rows out while the view does not change). Days are local days of
 * `timezone`. Without `limit`, every matching row.
 */
export async function listDiscrepancies(sql: Sql, f: DiscrepancyFilter): Promise<QueryResult<DiscrepancyRecord[]>> {
  const r = await pageOfDiscrepancies(sql, f);
  return r.ok ? { ok: true, value: r.value.rows } : r;
}

/** `listDiscrepancies`, also telling whether rows follow the page (`more`: one row past `limit` exists). */
export async function pageOfDiscrepancies(
  sql: Sql,
  f: DiscrepancyFilter,
): Promise<QueryResult<{ rows: DiscrepancyRecord[]; more: boolean }>> {
  const checked = checkFilter(f);
  if (!checked.ok) return checked;
  return guardView(async () => {
    const rows = await sql<Record<string, unknown>[]>`
      ${(await matchingDiscrepancies(sql, f)).query}
      order by coalesce(occurred_at, detected_at), type, id
      limit ${f.limit === undefined ? null : f.limit + 1} offset ${f.offset ?? 0}`;
    const more = f.limit !== undefined && rows.length > f.limit;
    return { rows: (more ? rows.slice(0, f.limit) : rows).map(toRecord), more };
  });
}

/**
 * The discrepancies matching a checked filter (`checkFilter`), as a fragment of a tagged query to order and
 * bound: `select * from` every live view `where` the filter holds. In an object, so awaiting it does not run it.
 */
export async function matchingDiscrepancies(sql: Reader, f: DiscrepancyFilter) {
  const from = f.from ? dayStart(f.from, f.timezone)!.toJSDate() : null;
  const to = f.to ? dayStart(f.to, f.timezone)!.plus({ days: 1 }).toJSDate() : null;
  return {
    query: sql`
      select * from ${(await discrepanciesFrom(sql)).from}
      where (${from}::timestamptz is null or coalesce(occurred_at, detected_at) >= ${from}::timestamptz)
        and (${to}::timestamptz is null or coalesce(occurred_at, detected_at) < ${to}::timestamptz)
        and (${f.type ?? null}::text is null or type = ${f.type ?? null}::text)
        and (${f.status ?? null}::text is null or status = ${f.status ?? null}::text)
        and (${f.subMerchantId ?? null}::text is null or ${f.subMerchantId ?? null}::text = any(sub_merchant_ids))
        and (${f.paymentId ?? null}::text is null or payment_id = ${f.paymentId ?? null}::text)`,
  };
}

export async function getDiscrepancy(sql: Sql, id: string): Promise<QueryResult<DiscrepancyRecord | undefined>> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
    return { ok: true, value: undefined };
  return guardView(async () => {
    const [r] = await sql<
      Record<string, unknown>[]
    >`select * from ${(await discrepanciesFrom(sql)).from} where id = ${id}::uuid`;
    return r ? toRecord(r) : undefined;
  });
}

export interface OperationRecord {
  [column: string]: unknown;
}

const plain = (r: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r))
    out[k] = typeof v === 'bigint' ? v.toString() : v instanceof Date ? v.toISOString() : v;
  return out;
};

/** The operations of a payment (or of an order), with their receivers and discrepancies. Amounts as decimal strings of minor units. */
export async function operationsOf(
  sql: Sql,
  ref: { paymentId?: string; orderId?: string },
): Promise<
  QueryResult<{ operations: OperationRecord[]; receivers: OperationRecord[]; discrepancies: DiscrepancyRecord[] }>
> {
  return guardView(async () => {
    // text by code unit, whatever the server's collation: `recon explain` lists alike on every server
    const ops = await sql<Record<string, unknown>[]>`
      select * from recon.operations
      where payment_id = ${ref.paymentId ?? null}::text or order_id = ${ref.orderId ?? null}::text
      order by pos_id collate "C", payment_id collate "C", method collate "C", ordinal`;
    const keys = ops.map((o) => String(o.operation_key));
    const payments = [...new Set(ops.map((o) => String(o.payment_id)))];
    const receivers = keys.length
      ? await sql<
          Record<string, unknown>[]
        >`select * from recon.operation_receivers where operation_key = any(${keys}::text[]) order by operation_key collate "C", receiver_name collate "C"`
      : [];
    const disc = payments.length
      ? await sql<
          Record<string, unknown>[]
        >`select * from ${(await discrepanciesFrom(sql)).from} where payment_id = any(${payments}::text[]) order by coalesce(occurred_at, detected_at), type, id`
      : [];
    return { operations: ops.map(plain), receivers: receivers.map(plain), discrepancies: disc.map(toRecord) };
  });
}

export type AcceptErrorCode =
  | 'EMPTY_NOTE'
  | 'EMPTY_NAME'
  | 'UNKNOWN_ID'
  | 'ALREADY_ACCEPTED'
  | 'ALREADY_RESOLVED'
  | 'NOT_PROJECTED'
  | 'DECISION_REQUIRED'
  | 'DECISION_NOT_APPLICABLE'
  | 'NEEDS_SECOND_PERSON'
  | 'MONEY_CHANGED';
export type AcceptResult =
  | { ok: true; eventId: string; discrepancy: DiscrepancyRecord }
  | { ok: false; code: AcceptErrorCode; message: string };

/**
 * Records an auditor's acceptance as a DiscrepancyAccepted event on stream discrepancy-<id>, appended at the
 * revision read: refused while a decision is in force there (accepted and not revoked), so two acceptances
 * never both land, even between two projection runs; a revoked one can be accepted again. The projection
 * freezes the discrepancy's values and evidence when it applies the event. The amount in doubt and its
 * currency go on the event; a write-off also carries what it books (decisionRefusal, writeOffOf).
 */
export async function acceptDiscrepancy(
  deps: { sql: Sql; store: EventStore },
  req: AcceptRequest,
): Promise<AcceptResult> {
  const planned = await acceptanceOf(deps, req);
  if (!planned.ok) return planned;
  try {
    await deps.store.append(planned.request.stream, planned.request.events, {
      expectedRevision: planned.request.expectedRevision!,
    });
  } catch (e) {
    if (isStoreError(e, 'WRONG_EXPECTED_REVISION')) {
      return {
        ok: false,
        code: 'ALREADY_ACCEPTED',
        message: `discrepancy ${planned.discrepancy.id}: another decision was recorded meanwhile (the projection has not applied it yet)`,
      };
    }
    throw e;
  }
  return { ok: true, eventId: planned.eventId, discrepancy: planned.discrepancy };
}

export type AcceptRequest = {
  id: string;
  note: string;
  by: string;
  at: Date;
  decision?: Decision;
  writeOffAccount?: string;
  /** the hold policy in force (default: RECON_HOLD_POLICY's): which types need pay, withhold or write_off */
  holdPolicy?: HoldPolicy;
  /**
   * whether one person's word alone may release this much held money (exceptions.pay, src/exceptions/severity.ts
   * `needsSecondPerson`): refused when not. Absent: the caller has its own approval (an exception's proposal).
   */
  releaseAllowed?: (amount: bigint, currency: string | null) => boolean;
  /**
   * the amount in doubt (minor units, null: none) and currency the person was shown: the decision is taken on
   * that or refused (MONEY_CHANGED), so a source changing meanwhile is never accepted unseen. Absent: as it is now.
   */
  seen?: { readonly amountInDoubt: string | null; readonly currency: string | null };
};

const moneyOrNone = (amount: string | null, currency: string | null) =>
  amount === null ? 'no amount' : moneyText(BigInt(amount), currency);

/** Refused when the money in doubt is no longer what the person was shown (the exceptions' words). */
function moneyChanged(
  d: DiscrepancyRecord,
  seen: AcceptRequest['seen'],
): { code: 'MONEY_CHANGED'; message: string } | null {
  const amount = amountInDoubt(d)?.toString() ?? null;
  if (seen === undefined || (seen.amountInDoubt === amount && seen.currency === d.currency)) return null;
  return {
    code: 'MONEY_CHANGED',
    message: `discrepancy ${d.id}: the decision was taken on ${moneyOrNone(seen.amountInDoubt, seen.currency)}, the amount in doubt is now ${moneyOrNone(amount, d.currency)}: look again and decide on the amount now`,
  };
}

/** The shares a released payment was seen with, in all and by receiver, recorded beside the release. */
function sharesOf(d: DiscrepancyRecord): { releasedShares?: string; releasedSplit?: Record<string, string> } {
  const split = splitSeen(d);
  if (split === null) return {};
  const names = [...split.keys()].sort();
  return {
    releasedShares: [...split.values()].reduce((a, x) => a + x, 0n).toString(),
    releasedSplit: Object.fromEntries(names.map((n) => [n, split.get(n)!.toString()])),
  };
}

/**
 * An acceptance checked and built, not yet written: the append (at the revision read) that records it, for a
 * caller that writes it together with events of its own in one appendMany (an exception's decision).
 */
export async function acceptanceOf(
  deps: { sql: Sql; store: EventStore },
  req: AcceptRequest,
): Promise<
  | { ok: true; request: AppendRequest; eventId: string; discrepancy: DiscrepancyRecord }
  | { ok: false; code: AcceptErrorCode; message: string }
> {
  const note = req.note.trim();
  const by = req.by.trim();
  if (!note)
    return {
      ok: false,
      code: 'EMPTY_NOTE',
      message: 'a note is required (--note TEXT): say why the difference is acceptable',
    };
  if (!by)
    return { ok: false, code: 'EMPTY_NAME', message: 'the name of the person accepting is required (--by NAME)' };
  const found = await getDiscrepancy(deps.sql, req.id);
  if (!found.ok) return { ok: false, code: 'NOT_PROJECTED', message: found.message };
  const d = found.value;
  if (!d) return { ok: false, code: 'UNKNOWN_ID', message: `no discrepancy with id ${req.id}` };
  // the stream, not the view, says what is in force: the projection may not have applied a revocation yet
  const stream = await deps.store.readStream(discrepancyStream(d.id));
  const inForce = decisionInForce(stream);
  if (inForce)
    return {
      ok: false,
      code: 'ALREADY_ACCEPTED',
      message: `discrepancy ${d.id} was already accepted by ${inForce.data.acceptedBy} at ${inForce.data.acceptedAt} (${inForce.decision}): revoke that decision first`,
    };
  const refused = decisionRefusal(d, req.decision, req.holdPolicy) ?? moneyChanged(d, req.seen);
  if (refused) return { ok: false, ...refused };
  const amount = amountInDoubt(d);
  // weighed as what the statements hold for it (the whole payment under a `payment` rule), not the doubt alone
  const released = req.decision === 'pay' ? releasedByPay(d, req.holdPolicy) : null;
  if (released !== null && req.releaseAllowed && !req.releaseAllowed(released, d.currency))
    return {
      ok: false,
      code: 'NEEDS_SECOND_PERSON',
      message: `discrepancy ${d.id}: releasing ${moneyText(released, d.currency)} held is above what one person releases alone (exceptions.pay.approvalAbove): propose it with recon exceptions accept ${d.id} --decision pay --note TEXT, for another approver to approve`,
    };
  // a pay or a write-off that releases the whole payment (a `payment` rule)
  const holdPolicy = req.holdPolicy ?? holdPolicyFromEnv();
  const payment = holdRuleOf(holdPolicy, d.type) === 'payment' ? releasedBy(d, req.decision, holdPolicy) : null;
  const writeOff =
    req.decision === 'write_off' ? writeOffOf(d, req.writeOffAccount ?? DEFAULT_WRITE_OFF_ACCOUNT) : undefined;
  const data = {
    discrepancyId: d.id,
    note,
    acceptedBy: by,
    acceptedAt: req.at.toISOString(),
    ...(req.decision ? { decision: req.decision } : {}),
    ...(amount !== null && d.currency ? { amount: amount.toString(), currency: d.currency } : {}),
    // the payment its person released: the statements hold what it grows by since (holds.ts `growthClaimsOf`)
    ...(payment !== null ? { released: payment.toString(), ...sharesOf(d) } : {}),
    ...(writeOff ? { writeOff } : {}),
  };
  const event = newEvent(DiscrepancyAccepted, data, decisionIdOf(stream, data));
  return {
    ok: true,
    request: { stream: discrepancyStream(d.id), events: [event], expectedRevision: nextRevisionOf(stream) },
    eventId: event.id,
    discrepancy: d,
  };
}

/**
 * The directory's names of these sub-merchants, or of all of them (id → name); empty when the journal's views
 * are not built. The directory is the marketplace's sub-merchants: small beside the discrepancies.
 */
export async function subMerchantNames(sql: Sql, ids?: readonly string[]): Promise<Map<string, string>> {
  if (ids !== undefined && ids.length === 0) return new Map();
  const r = await guardView(
    () =>
      sql<{ sub_merchant_id: string; name: string }[]>`
      select sub_merchant_id, name from recon.sub_merchants
      where ${ids === undefined} or sub_merchant_id = any(${[...(ids ?? [])]}::text[])`,
  );
  return new Map(r.ok ? r.value.map((x) => [x.sub_merchant_id, x.name]) : []);
}

/** Whether the directory knows this sub-merchant id (undefined: the directory's view is not built). */
export async function isKnownSubMerchant(sql: Sql, id: string): Promise<boolean | undefined> {
  const r = await guardView(
    () => sql<{ n: number }[]>`select count(*)::int as n from recon.sub_merchants where sub_merchant_id = ${id}`,
  );
  return r.ok ? (r.value[0]?.n ?? 0) > 0 : undefined;
}

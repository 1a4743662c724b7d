import type { Sql } from '../db/connect';
import {
  DISCREPANCY_TYPES,
  type DiscrepancyType,
  entryOf,
  LEGS,
  type Leg,
  SEVERITIES,
  type Severity,
} from '../reconciliation/discrepancies/registry';
import { allDiscrepancies, type DiscrepancyRecord, toRecord } from '../reconciliation/discrepancy-queries';
import { amountInDoubt, whatDiffers } from '../reconciliation/discrepancy-summary';
import { DISCREPANCY_STATUSES } from '../reconciliation/discrepancies/columns';
import { ExceptionRefused } from './errors';
import { ageHours, DEFAULT_EXCEPTION_POLICY, dueAt, type ExceptionPolicy, severityOf } from './severity';
import {
  EXCEPTION_STATES,
  type ExceptionState,
  type ExceptionWork,
  type HistoryEntry,
  type Proposal,
  stateOf,
} from './state';

/**
 * Exceptions as finance reads them: every leg's discrepancies (the union of discrepancy-queries.ts
 * `allDiscrepancies`) joined with the work on them (recon.exceptions of projections/exceptions.ts), with the
 * state, severity and due date computed when read (stateOf, severity.ts) so they follow the clock and the
 * policy in force without a write.
 */

export interface ExceptionItem {
  readonly id: string;
  readonly leg: Leg;
  readonly type: string;
  readonly state: ExceptionState;
  /** why it is in that state when the sources decided it (resolved, or reopened by new evidence) */
  readonly why: string | null;
  readonly severity: Severity;
  readonly dueAt: string | null;
  readonly ageHours: number;
  /** minor units as a decimal string; null when it concerns no amount */
  readonly amountInDoubt: string | null;
  readonly currency: string | null;
  readonly subMerchantIds: string[];
  readonly assignee: string | null;
  readonly pending: Proposal | null;
  readonly decision: string | null;
  /** the decision in force (its DiscrepancyAccepted event), null: none; a reopening names the one it was shown */
  readonly acceptance: string | null;
  readonly lastAction: string | null;
  readonly lastBy: string | null;
  readonly lastAt: string | null;
  readonly whatDiffers: string;
  /** the discrepancy as its leg's view has it, with the event that last changed it */
  readonly discrepancy: DiscrepancyRecord & { updated_by_event: string | null };
}

export interface ExceptionFilter {
  readonly leg?: string | undefined;
  readonly type?: string | undefined;
  readonly state?: string | undefined;
  readonly assignee?: string | undefined;
  readonly severity?: string | undefined;
  readonly subMerchantId?: string | undefined;
  readonly currency?: string | undefined;
  /** amount in doubt at least this (minor units) */
  readonly minAmount?: bigint | undefined;
  readonly minAgeHours?: number | undefined;
  /** at most this many (1…1000); none: every one */
  readonly limit?: number | undefined;
  /** the `next` of the page before (keyset paging) */
  readonly after?: string | undefined;
  /**
   * only the discrepancies the sources have not resolved, left out in the query (a resolved one's exception is
   * always `resolved`, stateOf): a month keeps a resolved one per order, a million at 1M payments
   */
  readonly standing?: boolean | undefined;
  /** the discrepancy's status (open, resolved, accepted): the console queue's `status` filter */
  readonly status?: string | undefined;
}

export const MAX_PAGE = 1000;

const oneOf = (field: string, value: string | undefined, allowed: readonly string[]) => {
  if (value !== undefined && !allowed.includes(value))
    throw new ExceptionRefused(
      'INVALID',
      field,
      `${field}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(value.slice(0, 80))}`,
    );
};

/** Checks a filter, naming the field that is wrong (ExceptionRefused, code INVALID). */
export function checkExceptionFilter(f: ExceptionFilter): void {
  oneOf('leg', f.leg, LEGS);
  oneOf('type', f.type, DISCREPANCY_TYPES);
  oneOf('state', f.state, EXCEPTION_STATES);
  oneOf('status', f.status, DISCREPANCY_STATUSES);
  oneOf('severity', f.severity, SEVERITIES);
  if (f.currency !== undefined && !/^[A-Z]{3}$/.test(f.currency))
    throw new ExceptionRefused('INVALID', 'currency', 'currency: expected a three-letter code such as UAH');
  if (f.minAmount !== undefined && f.minAmount < 0n)
    throw new ExceptionRefused('INVALID', 'min-amount', 'min-amount: expected whole minor units, 0 or more');
  if (f.minAgeHours !== undefined && (!Number.isSafeInteger(f.minAgeHours) || f.minAgeHours < 0))
    throw new ExceptionRefused('INVALID', 'min-age', 'min-age: expected whole hours, 0 or more');
  if (f.limit !== undefined && (!Number.isInteger(f.limit) || f.limit < 1 || f.limit > MAX_PAGE))
    throw new ExceptionRefused('INVALID', 'limit', `limit: expected a whole number from 1 to ${MAX_PAGE}`);
  if (f.after !== undefined && cursorOf(f.after) === null)
    throw new ExceptionRefused('INVALID', 'after', 'after: expected the `next` of the page before');
}

/** The sort key of an exception (operation time, then id): the keyset of paging. */
const keyOf = (d: Pick<DiscrepancyRecord, 'occurred_at' | 'detected_at' | 'id'>) =>
  `${d.occurred_at ?? d.detected_at ?? ''}|${d.id}`;
const cursorOf = (after: string): string | null => {
  const text = Buffer.from(after, 'base64url').toString('utf8');
  // the decoder skips what is not of its alphabet: a garbled cursor would read as another (or the same) one
  if (Buffer.from(text).toString('base64url') !== after) return null;
  const m =
    /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)?\|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.exec(
      text,
    );
  if (!m) return null;
  // a time as keyOf writes it (toISOString), so that the query's bound is that instant and no other
  const time = m[1];
  if (time !== undefined && (Number.isNaN(Date.parse(time)) || new Date(time).toISOString() !== time)) return null;
  return text;
};

async function exceptionsViewExists(sql: Sql): Promise<boolean> {
  const [r] = await sql<{ ok: boolean }[]>`select to_regclass('recon.exceptions') is not null as ok`;
  return r?.ok ?? false;
}

/** What a list reads from: the union of the live legs' views, and whether the work view exists yet. */
async function sourcesOf(sql: Sql) {
  return { from: await allDiscrepancies(sql), withWork: await exceptionsViewExists(sql) };
}

/**
 * The keyset's order as SQL: the operation's time to the millisecond as the key has it (a JS date), rows without
 * one first, then id. Spelled as each leg's index on it is (discrepancies/table.ts), in UTC so that it is
 * immutable (a truncation to the millisecond is the same instant in any zone).
 */
const SORT_AT = `date_trunc('milliseconds', coalesce(discrepancies.occurred_at, discrepancies.detected_at) at time zone 'UTC')`;

/**
 * The discrepancies with their work rows, filtered by what SQL can see, in the keyset's order, after the key
 * `after` (exclusive) and at most `limit` of them: with each leg's index on the order a batch reads its rows
 * and no more, however many come after it. Wrapped in an object, as the query is a thenable that would run
 * when returned from an async function.
 */
function joinedQuery(
  sql: Sql,
  src: { from: string; withWork: boolean },
  f: ExceptionFilter & { id?: string },
  after: string | null,
  limit: number | null,
) {
  const types = f.leg ? DISCREPANCY_TYPES.filter((t) => entryOf(t).leg === f.leg) : null;
  const work = src.withWork
    ? sql`left join recon.exceptions x on x.discrepancy_id = discrepancies.id`
    : sql`left join (select null::uuid as discrepancy_id) x on false`;
  const time = sql.unsafe(SORT_AT);
  const [at = '', id = null] = after?.split('|') ?? [];
  // rows without a time come first: after a key with one, none of them; after one without, those of a later id
  const keyset =
    after === null
      ? sql``
      : at === ''
        ? sql`and (${time} is not null or discrepancies.id > ${id}::uuid)`
        : sql`and ${time} is not null and (${time}, discrepancies.id) > ((${at}::timestamptz at time zone 'UTC'), ${id}::uuid)`;
  const query = sql<Record<string, unknown>[]>`
    select discrepancies.*, to_jsonb(x) as work from ${sql.unsafe(src.from)} ${work}
    where (${f.id ?? null}::uuid is null or discrepancies.id = ${f.id ?? null}::uuid)
      and (not ${f.standing === true} or discrepancies.status <> 'resolved')
      and (${f.status ?? null}::text is null or discrepancies.status = ${f.status ?? null}::text)
      and (${types}::text[] is null or discrepancies.type = any(${types}::text[]))
      and (${f.type ?? null}::text is null or discrepancies.type = ${f.type ?? null}::text)
      and (${f.currency ?? null}::text is null or discrepancies.currency = ${f.currency ?? null}::text)
      and (${f.subMerchantId ?? null}::text is null or ${f.subMerchantId ?? null}::text = any(discrepancies.sub_merchant_ids)
           or discrepancies.sub_merchant_id = ${f.subMerchantId ?? null}::text)
      ${keyset}
    order by ${time} nulls first, discrepancies.id
    ${limit === null ? sql`` : sql`limit ${limit}`}`;
  return { query };
}

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A work row of recon.exceptions (as to_jsonb gives it) to the fold's shape. */
function workOf(raw: unknown): ExceptionWork | null {
  if (raw === null || raw === undefined) return null;
  const x = raw as Record<string, unknown>;
  return {
    discrepancyId: String(x.discrepancy_id),
    work: x.work_state as ExceptionWork['work'],
    assignee: str(x.assignee),
    dueAt: x.due_at ? new Date(String(x.due_at)).toISOString() : null,
    pending: (x.pending as Proposal | null) ?? null,
    evidence: str(x.evidence),
    reasonCode: str(x.reason_code),
    acceptance: str(x.acceptance),
    decision: (x.decision as ExceptionWork['decision']) ?? null,
    lastAction: str(x.last_action),
    lastBy: str(x.last_by),
    lastAt: x.last_at ? new Date(String(x.last_at)).toISOString() : null,
    revision: Number(x.revision ?? -1),
    decisionRevision: Number(x.decision_revision ?? -1),
  };
}

/** One joined row as an exception at `now`. */
export function itemOf(r: Record<string, unknown>, now: Date, policy: ExceptionPolicy): ExceptionItem {
  const d = { ...toRecord(r), updated_by_event: str(r.updated_by_event) };
  const w = workOf(r.work);
  const { state, why } = stateOf(d, w);
  const amount = amountInDoubt(d);
  const due = w?.dueAt ?? dueAt(d, policy)?.toISOString() ?? null;
  return {
    id: d.id,
    leg: entryOf(d.type as DiscrepancyType)?.leg ?? 'psp',
    type: d.type,
    state,
    why,
    severity: severityOf(d, now, policy),
    dueAt: due,
    ageHours: ageHours(d, now),
    amountInDoubt: amount === null ? null : amount.toString(),
    currency: d.currency,
    subMerchantIds: [
      ...new Set([...(d.sub_merchant_ids ?? []), ...(d.sub_merchant_id ? [d.sub_merchant_id] : [])]),
    ].sort(),
    assignee: w?.assignee ?? null,
    pending: w?.pending ?? null,
    decision: w?.decision ?? null,
    acceptance: w?.acceptance ?? null,
    lastAction: w?.lastAction ?? null,
    lastBy: w?.lastBy ?? null,
    lastAt: w?.lastAt ?? null,
    whatDiffers: whatDiffers(d),
    discrepancy: d,
  };
}

function matches(x: ExceptionItem, f: ExceptionFilter): boolean {
  if (f.state !== undefined && x.state !== f.state) return false;
  if (f.assignee !== undefined && x.assignee !== f.assignee) return false;
  if (f.severity !== undefined && x.severity !== f.severity) return false;
  if (f.minAmount !== undefined && (x.amountInDoubt === null || BigInt(x.amountInDoubt) < f.minAmount)) return false;
  if (f.minAgeHours !== undefined && x.ageHours < f.minAgeHours) return false;
  return true;
}

export interface ExceptionPage {
  readonly items: ExceptionItem[];
  /** pass as `after` for the next page; null when this is the last */
  readonly next: string | null;
}

/**
 * The exceptions matching the filter, oldest operation first (then id), a page of `limit` after the cursor.
 * Severity, age, state and the amount in doubt are computed in memory from the rows SQL filtered, so a
 * page is cut after them: pages neither overlap nor leave one out while the rows do not change.
 */
export async function listExceptions(
  sql: Sql,
  f: ExceptionFilter = {},
  now: Date = new Date(),
  policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY,
  read: ListRead = {},
): Promise<ExceptionPage> {
  const limit = f.limit ?? Number.POSITIVE_INFINITY;
  const items: ExceptionItem[] = [];
  // left as soon as the page and the one after it are known: a page of 100 with no filter judged in memory is
  // one query of 101 rows; with one that few rows match, the batches grow to READ_BATCH
  const first = read.batchRows === undefined ? { batchRows: Math.min(READ_BATCH, limit + 1), grow: true } : {};
  pages: for await (const batch of exceptionBatches(sql, f, now, policy, { ...read, ...first })) {
    for (const x of batch) {
      items.push(x);
      if (items.length > limit) break pages;
    }
  }
  if (items.length <= limit) return { items, next: null };
  const page = items.slice(0, limit);
  return { items: page, next: Buffer.from(keyOf(page.at(-1)!.discrepancy)).toString('base64url') };
}

/**
 * Every exception matching `f` after its cursor (its `limit` not applied), in the keyset's order, a batch at a
 * time, each batch a query after the last row of the one before: a page reads a batch or two through the
 * legs' indexes on the order, and a list read whole (`recon exceptions list`) reads each row once.
 */
export async function* exceptionBatches(
  sql: Sql,
  f: ExceptionFilter,
  now: Date,
  policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY,
  read: ListRead = {},
): AsyncGenerator<ExceptionItem[]> {
  checkExceptionFilter(f);
  const src = await sourcesOf(sql);
  let size = read.batchRows ?? READ_BATCH;
  let after = f.after === undefined ? null : cursorOf(f.after);
  for (;;) {
    const rows = await joinedQuery(sql, src, f, after, size).query;
    read.onBatch?.(rows.length);
    const items: ExceptionItem[] = [];
    for (const r of rows) {
      const x = itemOf(r, now, policy);
      if (matches(x, f)) items.push(x);
      after = keyOf(x.discrepancy);
    }
    yield items;
    if (rows.length < size) return;
    if (read.grow) size = Math.min(READ_BATCH, size * 2);
  }
}

/** How a list is read: rows a fetch, and a hook told of each fetch (the tests count them). */
export interface ListRead {
  readonly batchRows?: number | undefined;
  /** each batch after a full one twice as many rows, up to READ_BATCH */
  readonly grow?: boolean | undefined;
  readonly onBatch?: (rows: number) => void;
}

/** rows fetched at a time while a list is read */
const READ_BATCH = 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One exception, or null when no discrepancy has that id. */
export async function getException(
  sql: Sql,
  id: string,
  now: Date = new Date(),
  policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY,
): Promise<ExceptionItem | null> {
  if (!UUID.test(id)) return null;
  const [r] = await joinedQuery(sql, await sourcesOf(sql), { id: id.toLowerCase() }, null, null).query;
  return r ? itemOf(r, now, policy) : null;
}

/** The history of one exception, in the order it happened (the log's). */
export async function exceptionHistory(sql: Sql, id: string): Promise<HistoryEntry[]> {
  if (!UUID.test(id) || !(await exceptionsViewExists(sql))) return [];
  const rows = await sql<Record<string, unknown>[]>`
    select event_id, discrepancy_id, action, by_user, at, why, detail from recon.exception_history
    where discrepancy_id = ${id.toLowerCase()}::uuid order by commit_pos, prepare_pos`;
  return rows.map((r) => ({
    eventId: String(r.event_id),
    discrepancyId: String(r.discrepancy_id),
    action: String(r.action),
    by: String(r.by_user),
    at: new Date(String(r.at instanceof Date ? r.at.toISOString() : r.at)).toISOString(),
    why: str(r.why),
    detail: (r.detail as Record<string, unknown>) ?? {},
  }));
}

/** An exception as JSON (the CLI's --format json and the HTTP API): plain values only. */
export function exceptionJson(x: ExceptionItem): Record<string, unknown> {
  const { discrepancy, ...rest } = x;
  return { ...rest, discrepancy: { ...discrepancy } };
}

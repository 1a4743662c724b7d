import type { Sql } from '../db/connect';
import { checkText, REFERENCE_TEXT } from '../input-rules';
import { DISCREPANCY_TYPES, LEGS, type Leg } from '../reconciliation/discrepancies/registry';
import { DISCREPANCY_VIEW_OF } from '../reconciliation/discrepancies/table';
import { DISCREPANCY_STATUSES } from '../reconciliation/discrepancy-types';
import { DISCREPANCY_REGISTRY, SEVERITIES, type Severity } from '../reconciliation/discrepancies/registry';
import { DEFAULT_EXCEPTION_POLICY, type ExceptionPolicy } from '../exceptions/severity';

/**
 * The exceptions queue (docs/console.md, "Exceptions"): the four legs' discrepancy views read as one, every
 * filter in PostgreSQL, paged by keyset on (detected_at, id) — each leg's table has an index on
 * (status, detected_at, id) and (type, status, detected_at, id) (discrepancies/table.ts) — so the page costs
 * the same on the first page and the thousandth. The amount in doubt is the core's `amount_in_doubt` column
 * (discrepancies/amounts.ts, `amountInDoubt` stamped on every row), and severity is severity.ts's rule
 * (the highest of the type's default, the amount and the age, by the policy's thresholds) spelled as a
 * condition on those columns, so a severity filter needs no row computed in memory.
 */

export const PAGE_SIZE = 50;

export interface QueueFilter {
  readonly legs: readonly Leg[];
  readonly type: string | null;
  /** null: any status */
  readonly status: string | null;
  /** a user id: the exceptions assigned to them (recon.exceptions) */
  readonly assignee: string | null;
  readonly severity: Severity | null;
  readonly subMerchant: string | null;
  readonly currency: string | null;
  /** amount in doubt at least this (minor units) */
  readonly minAmount: bigint | null;
  /** detected at least this many days ago */
  readonly olderThanDays: number | null;
  readonly order: 'asc' | 'desc';
  /** the last row of the page before (keyset) */
  readonly after: { readonly at: Date; readonly id: string } | null;
}

export interface QueueRow {
  readonly leg: Leg;
  readonly id: string;
  readonly type: string;
  readonly status: string;
  readonly payment_id: string | null;
  readonly order_id: string | null;
  readonly receiver_name: string | null;
  readonly sub_merchant_id: string | null;
  readonly currency: string | null;
  readonly values: Record<string, unknown>;
  readonly occurred_at: Date | null;
  readonly detected_at: Date;
  /** the money in doubt (minor units): the core's `amount_in_doubt` */
  readonly amount: bigint | null;
  readonly assignee: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The filter from a query string; a value that is not acceptable is named (shown on the page, nothing run). */
export function parseQueueFilter(
  q: URLSearchParams,
): { ok: true; filter: QueueFilter } | { ok: false; problem: string } {
  const text = (k: string): string | null => {
    const v = q.get(k);
    if (v === null || v === '') return null;
    const r = checkText(v, REFERENCE_TEXT);
    if (!r.ok) throw new Error(`${k}: ${r.reason}`);
    return r.value;
  };
  try {
    const leg = text('leg');
    if (leg !== null && !(LEGS as readonly string[]).includes(leg)) return { ok: false, problem: `leg: ${leg}` };
    const type = text('type');
    if (type !== null && !(DISCREPANCY_TYPES as readonly string[]).includes(type))
      return { ok: false, problem: `type: ${type}` };
    const status = q.has('status') ? text('status') : 'open';
    if (status !== null && !(DISCREPANCY_STATUSES as readonly string[]).includes(status))
      return { ok: false, problem: `status: ${status}` };
    const severity = text('severity');
    if (severity !== null && !(SEVERITIES as readonly string[]).includes(severity))
      return { ok: false, problem: `severity: ${severity}` };
    const currency = text('currency');
    if (currency !== null && !/^[A-Z]{3}$/.test(currency)) return { ok: false, problem: `currency: ${currency}` };
    const min = text('min_amount');
    if (min !== null && !/^\d{1,15}$/.test(min)) return { ok: false, problem: `min_amount: ${min}` };
    const age = text('older_than_days');
    if (age !== null && !/^\d{1,4}$/.test(age)) return { ok: false, problem: `older_than_days: ${age}` };
    const order = text('order') ?? 'asc';
    if (order !== 'asc' && order !== 'desc') return { ok: false, problem: `order: ${order}` };
    const after = cursorOf(text('after'));
    if (after === undefined) return { ok: false, problem: 'after: not a page of this queue' };
    return {
      ok: true,
      filter: {
        legs: leg ? [leg as Leg] : LEGS,
        type,
        status,
        assignee: text('assignee'),
        severity: severity as Severity | null,
        subMerchant: text('sub_merchant'),
        currency,
        minAmount: min === null ? null : BigInt(min),
        olderThanDays: age === null ? null : Number(age),
        order,
        after,
      },
    };
  } catch (e) {
    return { ok: false, problem: (e as Error).message };
  }
}

/** `<ISO time>~<uuid>` → the keyset; undefined when malformed. */
function cursorOf(text: string | null): QueueFilter['after'] | undefined {
  if (text === null) return null;
  const [at, id] = text.split('~');
  if (!at || !id || !UUID.test(id) || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(at)) return undefined;
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? undefined : { at: d, id };
}

export const cursorText = (r: Pick<QueueRow, 'detected_at' | 'id'>) => `${r.detected_at.toISOString()}~${r.id}`;

/** The legs whose view exists (a database where a projection was never built still answers). */
export async function liveLegs(sql: Sql, legs: readonly Leg[]): Promise<Leg[]> {
  const names = legs.map((l) => `recon.${DISCREPANCY_VIEW_OF[l]}`);
  const live = await sql<{ v: string }[]>`
    select v from unnest(${names}::text[]) as x(v) where to_regclass(v) is not null`;
  return legs.filter((l) => live.some((x) => x.v === `recon.${DISCREPANCY_VIEW_OF[l]}`));
}

const TYPE_SEVERITY = Object.entries(DISCREPANCY_REGISTRY as Record<string, { severity: Severity }>);
const typesOf = (s: Severity) => TYPE_SEVERITY.filter(([, e]) => e.severity === s).map(([t]) => t);

/**
 * severity.ts `severityOf` as SQL over a view's columns: the rank (0 low … 3 critical) of the highest of the
 * type's default (an unknown type: medium), the amount in doubt's and the age's.
 */
export function severityRank(sql: Sql, now: Date, p: ExceptionPolicy) {
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000);
  const band = (a: ExceptionPolicy['amountAtLeast']) =>
    sql`case when abs(amount_in_doubt) >= ${a.critical.toString()}::bigint then 3
      when abs(amount_in_doubt) >= ${a.high.toString()}::bigint then 2
      when abs(amount_in_doubt) >= ${a.medium.toString()}::bigint then 1 else 0 end`;
  // a currency's own thresholds first (severity.ts amountThresholdsOf), the default for the rest
  const byAmount = Object.entries(p.amountAtLeastByCurrency ?? {}).reduceRight(
    (rest, [currency, a]) => sql`case when currency = ${currency} then ${band(a)} else ${rest} end`,
    band(p.amountAtLeast),
  );
  const h = p.ageHoursAtLeast;
  const known = TYPE_SEVERITY.map(([t]) => t);
  return sql`greatest(
    case when type = any(${typesOf('critical')}::text[]) then 3 when type = any(${typesOf('high')}::text[]) then 2
      when type = any(${typesOf('medium')}::text[]) or not type = any(${known}::text[]) then 1 else 0 end,
    ${byAmount},
    case when detected_at <= ${hoursAgo(h.critical)} then 3 when detected_at <= ${hoursAgo(h.high)} then 2
      when detected_at <= ${hoursAgo(h.medium)} then 1 else 0 end)`;
}

/** One leg's part of the page: filtered and ordered in its own view, so each uses its own index. */
export function legPart(
  sql: Sql,
  leg: Leg,
  f: QueueFilter,
  now: Date,
  limit: number,
  policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY,
) {
  const view = sql(`recon.${DISCREPANCY_VIEW_OF[leg]}`);
  const older = f.olderThanDays === null ? null : new Date(now.getTime() - f.olderThanDays * 86_400_000);
  const keyset = !f.after
    ? sql``
    : f.order === 'asc'
      ? sql`and (detected_at, id) > (${f.after.at}, ${f.after.id}::uuid)`
      : sql`and (detected_at, id) < (${f.after.at}, ${f.after.id}::uuid)`;
  return sql`(select ${leg}::text as leg, id, type, status, payment_id, order_id, receiver_name, sub_merchant_id,
      currency, "values", occurred_at, detected_at, amount_in_doubt
    from ${view}
    where true
      ${f.status === null ? sql`` : sql`and status = ${f.status}`}
      ${f.type === null ? sql`` : sql`and type = ${f.type}`}
      ${f.subMerchant === null ? sql`` : sql`and sub_merchant_ids @> array[${f.subMerchant}]::text[]`}
      ${f.currency === null ? sql`` : sql`and currency = ${f.currency}`}
      ${f.minAmount === null ? sql`` : sql`and abs(amount_in_doubt) >= ${f.minAmount.toString()}::bigint`}
      ${f.severity === null ? sql`` : sql`and ${severityRank(sql, now, policy)} = ${SEVERITIES.indexOf(f.severity)}`}
      ${f.assignee === null ? sql`` : sql`and id in (select discrepancy_id from recon.exceptions where assignee = ${f.assignee})`}
      ${older === null ? sql`` : sql`and detected_at <= ${older}`}
      ${keyset}
    order by detected_at ${f.order === 'asc' ? sql`asc` : sql`desc`}, id ${f.order === 'asc' ? sql`asc` : sql`desc`}
    limit ${limit})`;
}

/** A page of the queue and whether another follows. */
export async function queuePage(
  sql: Sql,
  f: QueueFilter,
  now = new Date(),
  size = PAGE_SIZE,
  policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY,
): Promise<{ rows: QueueRow[]; more: boolean }> {
  const legs = await liveLegs(sql, f.legs);
  if (legs.length === 0) return { rows: [], more: false };
  const withWork = await workViewExists(sql);
  if (f.assignee !== null && !withWork) return { rows: [], more: false };
  const parts = legs.map((l) => legPart(sql, l, f, now, size + 1, policy));
  const union = parts.slice(1).reduce((all, p) => sql`${all} union all ${p}`, parts[0]!);
  const dir = f.order === 'asc' ? sql`asc` : sql`desc`;
  const work = withWork
    ? sql`left join recon.exceptions x on x.discrepancy_id = q.id`
    : sql`left join (select null::uuid as discrepancy_id, null::text as assignee) x on false`;
  const rows = await sql<(Omit<QueueRow, 'amount'> & { amount_in_doubt: string | null })[]>`
    select q.*, x.assignee from (${union}) as q ${work}
    order by q.detected_at ${dir}, q.id ${dir} limit ${size + 1}`;
  const page = rows.slice(0, size).map(({ amount_in_doubt, ...r }) => ({
    ...r,
    amount: amount_in_doubt === null ? null : BigInt(amount_in_doubt),
  }));
  return { rows: page, more: rows.length > size };
}

async function workViewExists(sql: Sql): Promise<boolean> {
  const [r] = await sql<{ ok: boolean }[]>`select to_regclass('recon.exceptions') is not null as ok`;
  return r?.ok ?? false;
}

import { EMPTY_BANK_CONFIG, type BankConfig } from '../../config/bank';
import { BankEntryBooked, BankStatementImported } from '../../events/bank-events';
import { isEvent } from '../../events/catalog';
import { RegisterRecordObserved, type NormalizedRegisterRecord } from '../../events/ingest-events';
import { reportIdOf, secondRowOfReport } from '../../events/register-row';
import { rowFacts } from '../../journal-rules';
import { type AnyEvent, isAnyOf } from '../../projector/handlers';
import type { ProjectionContext, Tx } from '../../projector/projection';
import type { RecordedEvent } from '../../store/types';
import { deductedChargeOf, isBankCharge } from '../bank-charges';
import { contributionOf, dueDays, type ActivityDay } from './expected';
import { judgeSettlements, type BankCredit, type SettlementJudgement } from './match';

/**
 * What the cash leg knows, kept in tables of the projection's own build schema (the settlement read model
 * and the journal each keep theirs: a projection never reads another one's build): per register row its
 * effect on what the PSP owes (the latest observation wins; of one report, its first row), the sums per currency and local day, the
 * credits and statements of `settlement` accounts. `judgeCurrency` matches one currency from these tables.
 *
 * Within one batch (one transaction) the state of a currency judged once is kept in memory (`CashMemory`)
 * and moved by each later append exactly as the tables are moved, so that judging it again after each
 * append costs no read: the cost of an append is its own rows, not the currency's month.
 */

export function cashStateTables(s: string): string {
  // a day's sums are numeric: 9,224 rows at the largest amount a row may have (10^15) pass int8's 2^63 − 1
  return `
    create table ${s}.cash_rows (row_key text primary key, currency text not null, day text not null,
      clearing int8 not null, fees int8 not null, report_id text);
    create table ${s}.cash_days (currency text not null, day text not null, clearing numeric not null,
      fees numeric not null, primary key (currency, day));
    create table ${s}.cash_credits (event_id uuid primary key, account_id text not null, currency text not null,
      direction text not null, amount int8 not null, booking_date text not null, value_date text,
      bank_ref text, end_to_end_id text, remittance text, counterparty_name text, statement_id text not null,
      is_return boolean not null default false, charge int8 not null default 0);
    create index on ${s}.cash_credits (currency, direction);
    create table ${s}.cash_statements (account_id text not null, statement_id text not null, currency text not null,
      opening_date text not null, closing_date text not null, opening_balance int8 not null,
      closing_balance int8 not null, event_id uuid not null, primary key (account_id, statement_id));
  `;
}

export const bankOf = (ctx: ProjectionContext): BankConfig => ctx.bank ?? EMPTY_BANK_CONFIG;

const holidaySets = new WeakMap<BankConfig['settlement'], ReadonlySet<string>>();

/**
 * The settlement holidays as one Set per configuration, the same object at every append: src/business-days.ts
 * remembers its answers per Set, so the judging of each append reuses the days already worked out.
 */
export function holidaysOf(ctx: ProjectionContext): ReadonlySet<string> {
  const s = bankOf(ctx).settlement;
  let set = holidaySets.get(s);
  if (!set) {
    set = new Set(s.holidays);
    holidaySets.set(s, set);
  }
  return set;
}

/** Events in the order given, cut where the append (the events sharing `position.commit`) changes. */
export function appendsOf(events: readonly RecordedEvent[]): RecordedEvent[][] {
  const out: RecordedEvent[][] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (last && last[0]!.position.commit === e.position.commit) last.push(e);
    else out.push([e]);
  }
  return out;
}

function fallbackAt(e: RecordedEvent): Date {
  const observed = e.metadata['observedAt'];
  return typeof observed === 'string' && !Number.isNaN(Date.parse(observed)) ? new Date(observed) : e.recordedAt;
}

/** The events the cash leg reads (the settlement projection and the journal's settlement bookings). */
export const CASH_EVENTS: readonly AnyEvent[] = [RegisterRecordObserved, BankEntryBooked, BankStatementImported];

/** Does the batch hold an event the cash leg reads? (cheap to ask before a batch is worked on) */
export function cashEventsIn(events: readonly RecordedEvent[]): boolean {
  return events.some((e) => isAnyOf(CASH_EVENTS, e));
}

/** Applies one append to the tables; returns the currencies whose settlements must be judged again. */
export async function applyCashAppend(
  tx: Tx,
  schema: string,
  events: readonly RecordedEvent[],
  ctx: ProjectionContext,
  memory: CashMemory = newCashMemory(),
): Promise<Set<string>> {
  const touched = new Set<string>();
  const settlementAccounts = new Set(
    bankOf(ctx)
      .accounts.filter((a) => a.role === 'settlement')
      .map((a) => a.id),
  );
  const rows = new Map<string, RowObservation[]>();
  for (const e of events) {
    if (isEvent(RegisterRecordObserved, e)) {
      const d = e.data as { posId: string; record: NormalizedRegisterRecord };
      const f = rowFacts(d.posId, d.record, fallbackAt(e), ctx.timezone);
      const o = { now: contributionOf(f, ctx.timezone), reportId: reportIdOf(e.metadata), at: f };
      const seen = rows.get(f.rowKey);
      if (seen) seen.push(o);
      else rows.set(f.rowKey, [o]);
    } else if (isEvent(BankEntryBooked, e)) {
      const d = BankEntryBooked.schema.parse(e.data);
      if (!settlementAccounts.has(d.accountId)) continue;
      // the bank's own charge (or its refund) pays nothing the PSP owes: the journal books it as a bank fee
      if (isBankCharge(d.transactionCode, bankOf(ctx).charges)) continue;
      // a credit the bank deducted its charge from pays what the PSP sent (the charge: a bank fee, charge-bookings.ts)
      const charge = deductedChargeOf(d, bankOf(ctx).charges);
      const amount = (BigInt(d.amount) + charge).toString();
      const r = await tx`insert into ${tx(schema)}.cash_credits (event_id, account_id, currency, direction, amount,
          booking_date, value_date, bank_ref, end_to_end_id, remittance, counterparty_name, statement_id, is_return,
          charge)
        values (${e.id}, ${d.accountId}, ${d.currency}, ${d.direction}, ${amount}, ${d.bookingDate}, ${d.valueDate},
          ${d.bankRef}, ${d.endToEndId}, ${d.remittance}, ${d.counterpartyName}, ${d.statementId}, ${d.isReturn},
          ${charge.toString()})
        on conflict do nothing`;
      if (!r.count) continue;
      touched.add(d.currency);
      // a credit marked as a return gives back one of our own debits (a sweep reversed, MT940 RD): no PSP payment
      if (d.direction === 'credit' && !d.isReturn)
        memory.cash.get(d.currency)?.credits.push(creditOf(e.id, { ...d, amount }, charge));
      // a debit that reverses a credit (MT940 RC, camt RvslInd) takes back what that credit paid
      else if (d.direction === 'debit' && d.isReturn) memory.cash.get(d.currency)?.reversals.push(creditOf(e.id, d));
    } else if (isEvent(BankStatementImported, e)) {
      const d = BankStatementImported.schema.parse(e.data);
      if (!settlementAccounts.has(d.accountId)) continue;
      const r = await tx`insert into ${tx(schema)}.cash_statements (account_id, statement_id, currency, opening_date,
          closing_date, opening_balance, closing_balance, event_id)
        values (${d.accountId}, ${d.statementId}, ${d.currency}, ${d.openingDate}, ${d.closingDate},
          ${d.openingBalance}, ${d.closingBalance}, ${e.id})
        on conflict do nothing`;
      if (!r.count) continue;
      touched.add(d.currency);
      const held = memory.cash.get(d.currency);
      // max(closing_date) of the table: ISO days, whose text order is their order
      if (held && (held.through === null || d.closingDate > held.through)) held.through = d.closingDate;
    }
  }
  if (rows.size) for (const c of await applyRows(tx, schema, rows, memory)) touched.add(c);
  return touched;
}

type Contribution = { currency: string; day: string; clearing: bigint; fees: bigint };

/** One observation of a register row: its contribution (null: none), its report, where a zero one stands. */
type RowObservation = {
  now: Contribution | null;
  reportId: string | null;
  at: { currency: string; bookedOn: string };
};

/**
 * The observation of a row in force after the append's (undefined: none changes it): the latest, but of one
 * report its first row (a second is a `duplicate`, src/events/register-row.ts `secondRowOfReport`).
 */
function inForceOf(observations: readonly RowObservation[], reportId: string | null | undefined) {
  let out: RowObservation | undefined;
  for (const o of observations) {
    if (secondRowOfReport(out ? out.reportId : reportId, o.reportId)) continue;
    out = o;
  }
  return out;
}

/** Replaces each row's contribution (the latest observation wins) and moves the day sums by the difference. */
async function applyRows(
  tx: Tx,
  schema: string,
  observed: Map<string, RowObservation[]>,
  memory: CashMemory,
): Promise<Set<string>> {
  const keys = [...observed.keys()];
  const prior = await tx<
    { row_key: string; currency: string; day: string; clearing: bigint; fees: bigint; report_id: string | null }[]
  >`
    select row_key, currency, day, clearing, fees, report_id from ${tx(schema)}.cash_rows
    where row_key = any(${keys}::text[])`;
  const before = new Map(prior.map((p) => [p.row_key, p]));
  const rows = new Map<string, RowObservation>();
  for (const [k, list] of observed) {
    const o = inForceOf(list, before.get(k)?.report_id);
    if (o) rows.set(k, o);
  }
  const delta = new Map<string, Contribution>();
  const move = (c: Contribution, sign: bigint) => {
    const k = `${c.currency}|${c.day}`;
    const d = delta.get(k) ?? { currency: c.currency, day: c.day, clearing: 0n, fees: 0n };
    d.clearing += sign * BigInt(c.clearing);
    d.fees += sign * BigInt(c.fees);
    delta.set(k, d);
  };
  const upsert: Contribution[] = [];
  const upsertKeys: string[] = [];
  const upsertReports: Array<string | null> = [];
  const gone: string[] = [];
  for (const [k, { now, reportId, at }] of rows) {
    const was = before.get(k);
    if (was) move(was, -1n);
    if (now) move(now, 1n);
    // a row without contribution is kept (at zero) while its report must be known, to tell a second row of it
    if (now || reportId !== null) {
      upsert.push(now ?? { currency: at.currency, day: at.bookedOn, clearing: 0n, fees: 0n });
      upsertKeys.push(k);
      upsertReports.push(reportId);
    } else if (was) gone.push(k);
  }
  if (gone.length) await tx`delete from ${tx(schema)}.cash_rows where row_key = any(${gone}::text[])`;
  if (upsert.length)
    await tx`insert into ${tx(schema)}.cash_rows (row_key, currency, day, clearing, fees, report_id)
      select * from unnest(${upsertKeys}::text[], ${upsert.map((u) => u.currency)}::text[], ${upsert.map((u) => u.day)}::text[],
        ${upsert.map((u) => u.clearing.toString())}::int8[], ${upsert.map((u) => u.fees.toString())}::int8[],
        ${upsertReports}::text[])
      on conflict (row_key) do update set currency = excluded.currency, day = excluded.day,
        clearing = excluded.clearing, fees = excluded.fees, report_id = excluded.report_id`;
  const moved = [...delta.values()].filter((d) => d.clearing !== 0n || d.fees !== 0n);
  if (moved.length)
    await tx`insert into ${tx(schema)}.cash_days (currency, day, clearing, fees)
      select * from unnest(${moved.map((m) => m.currency)}::text[], ${moved.map((m) => m.day)}::text[],
        ${moved.map((m) => m.clearing.toString())}::numeric[], ${moved.map((m) => m.fees.toString())}::numeric[])
      on conflict (currency, day) do update set clearing = cash_days.clearing + excluded.clearing,
        fees = cash_days.fees + excluded.fees`;
  for (const m of moved) {
    // the same upsert in memory: a day row once written stays, at zero too (it still bounds its due day's activity)
    const days = memory.cash.get(m.currency)?.days;
    const was = days?.get(m.day);
    if (was) days!.set(m.day, { clearing: was.clearing + m.clearing, fees: was.fees + m.fees });
    else days?.set(m.day, { clearing: m.clearing, fees: m.fees });
  }
  return new Set(moved.map((m) => m.currency));
}

/**
 * One currency's state as its tables hold it (cash_days, the credits of cash_credits, max(closing_date) of
 * cash_statements): what `judgeCurrency` reads, and all it reads.
 */
export interface CurrencyCash {
  readonly days: Map<string, { readonly clearing: bigint; readonly fees: bigint }>;
  readonly credits: BankCredit[];
  /** debits marked as returns: reversals of credits (match.ts `withoutReversed`) */
  readonly reversals: BankCredit[];
  through: string | null;
}

/**
 * The states of the currencies judged so far in one batch, by currency. Why a judgement from it equals one
 * read from the tables: a currency enters it only when judged, read from the tables as they stand then; from
 * there on, each write of `applyCashAppend` to that currency's rows is made to it too, the same change (a new
 * credit, a later closing day, a day's sums moved by the same difference), and nothing else writes these
 * tables (they belong to the projection's build). It lives for one `apply` (one transaction): a batch that
 * fails is retried with a new one, and the next batch starts empty and reads what this one committed. So the
 * inputs of `judgeSettlements` are the same sets whatever the batch sizes (their order never counts: it sorts
 * them), and so is every judgement.
 */
export interface CashMemory {
  readonly cash: Map<string, CurrencyCash>;
}

export const newCashMemory = (): CashMemory => ({ cash: new Map() });

type BookedCredit = Pick<
  ReturnType<typeof BankEntryBooked.schema.parse>,
  'accountId' | 'currency' | 'bookingDate' | 'amount' | 'bankRef'
>;

/** An event id as PostgreSQL writes a uuid as text (lower case, hyphens 8-4-4-4-12), whatever form it came in. */
function uuidText(id: string): string {
  const h = id.replace(/[{}-]/g, '').toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A credit as `judgeCurrency` reads it back from cash_credits (`event_id::text`; a charge only when one). */
function creditOf(eventId: string, d: BookedCredit, charge = 0n): BankCredit {
  return {
    id: uuidText(eventId),
    accountId: d.accountId,
    currency: d.currency,
    bookingDate: d.bookingDate,
    amount: BigInt(d.amount),
    bankRef: d.bankRef,
    ...(charge > 0n ? { charge } : {}),
  };
}

interface CreditRow {
  event_id: string;
  account_id: string;
  booking_date: string;
  amount: bigint;
  bank_ref: string | null;
  charge: bigint;
}

async function loadCurrency(tx: Tx, schema: string, currency: string): Promise<CurrencyCash> {
  const [days, credits, reversals, [cover]] = await Promise.all([
    tx<{ day: string; clearing: bigint; fees: bigint }[]>`
      select day, clearing, fees from ${tx(schema)}.cash_days where currency = ${currency} order by day`,
    tx<CreditRow[]>`
      select event_id::text, account_id, booking_date, amount, bank_ref, charge from ${tx(schema)}.cash_credits
      where currency = ${currency} and direction = 'credit' and not is_return`,
    tx<CreditRow[]>`
      select event_id::text, account_id, booking_date, amount, bank_ref, charge from ${tx(schema)}.cash_credits
      where currency = ${currency} and direction = 'debit' and is_return`,
    tx<{ through: string | null }[]>`
      select max(closing_date) as through from ${tx(schema)}.cash_statements where currency = ${currency}`,
  ]);
  const line = (c: CreditRow): BankCredit => ({
    id: c.event_id,
    accountId: c.account_id,
    currency,
    bookingDate: c.booking_date,
    amount: BigInt(c.amount),
    bankRef: c.bank_ref,
    ...(BigInt(c.charge) > 0n ? { charge: BigInt(c.charge) } : {}),
  });
  return {
    days: new Map(days.map((d) => [d.day, { clearing: BigInt(d.clearing), fees: BigInt(d.fees) }])),
    credits: credits.map(line),
    reversals: reversals.map(line),
    through: cover?.through ?? null,
  };
}

/**
 * Matches one currency from the tables as they stand (docs/bank.md, "The cash leg"): read once per batch,
 * then from `memory` (see `CashMemory`).
 */
export async function judgeCurrency(
  tx: Tx,
  schema: string,
  currency: string,
  ctx: ProjectionContext,
  memory: CashMemory = newCashMemory(),
): Promise<SettlementJudgement> {
  let held = memory.cash.get(currency);
  if (!held) {
    held = await loadCurrency(tx, schema, currency);
    memory.cash.set(currency, held);
  }
  const s = bankOf(ctx).settlement;
  const holidays = holidaysOf(ctx);
  const activity: ActivityDay[] = [...held.days].map(([day, d]) => ({ currency, day, ...d }));
  const due = dueDays(activity, { lagBusinessDays: s.lagBusinessDays, holidays });
  return judgeSettlements(
    due,
    held.credits,
    held.through,
    { tolerance: s.tolerance[currency] ?? 0n, lateBusinessDays: s.lateBusinessDays, holidays },
    held.reversals,
  );
}

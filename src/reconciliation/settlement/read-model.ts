import { ident } from '../../db/identifier';
import { copyRows } from '../../projector/copy-rows';
import type { Tx } from '../../projector/projection';
import type { SettlementJudgement } from './match';
import { deadlineOf, type MatchRules } from './match';

/**
 * The settlement read model's tables of one currency, rewritten from a judgement: expected settlements
 * by settlement day with their state, and the matches.
 */

export function readModelTables(s: string): string {
  // what a settlement day owes sums days of rows: numeric, as cash_days (state.ts), never an int8 that overflows
  return `
    create table ${s}.expected (currency text not null, due_on text not null, activity_from text not null,
      activity_to text not null, clearing numeric not null, fees numeric not null, amount numeric not null,
      deadline text not null, status text not null, credit_event_id uuid, received_on text,
      primary key (currency, due_on));
    create table ${s}.matches (credit_event_id uuid primary key, account_id text not null, currency text not null,
      booked_on text not null, bank_ref text, received int8 not null, expected numeric not null, bank_fee int8 not null,
      shortfall numeric not null, due_on text[] not null, late_days text[] not null);
    create table ${s}.charges_returned (credit_event_id uuid primary key, currency text not null, charge int8 not null);
  `;
}

type ExpectedRow = [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string | null,
  string | null,
];

export async function writeReadModel(
  tx: Tx,
  schema: string,
  currency: string,
  j: SettlementJudgement,
  rules: Pick<MatchRules, 'lateBusinessDays' | 'holidays'>,
): Promise<void> {
  const expected: ExpectedRow[] = [];
  const row = (d: (typeof j.missing)[number], status: string, credit: string | null, on: string | null) =>
    expected.push([
      currency,
      d.day,
      d.firstActivity,
      d.lastActivity,
      d.clearing.toString(),
      d.fees.toString(),
      d.amount.toString(),
      deadlineOf(d, rules),
      status,
      credit,
      on,
    ]);
  // a day paid in two credits (match.ts rule 3) is one row: the first credit's, received when the later came
  const rests = new Map(j.matches.filter((m) => m.restOf).map((m) => [m.restOf!, m]));
  for (const m of j.matches) {
    if (m.restOf) continue;
    const rest = rests.get(m.credit.id);
    for (const d of m.days) {
      const late = [...m.late, ...(rest?.late ?? [])].some((l) => l.day === d.day);
      const status = m.shortfall > 0n ? 'short' : late ? 'paid_late' : 'paid';
      const on =
        rest && rest.credit.bookingDate > m.credit.bookingDate ? rest.credit.bookingDate : m.credit.bookingDate;
      row(d, status, m.credit.id, on);
    }
  }
  for (const d of j.missing) row(d, 'missing', null, null);
  for (const d of j.inTransit) row(d, 'in_transit', null, null);
  await tx`delete from ${tx(schema)}.expected where currency = ${currency}`;
  await tx`delete from ${tx(schema)}.matches where currency = ${currency}`;
  // a credit taken back with its deducted charge: the journal books nothing of it, so its line reads as credited
  await tx`delete from ${tx(schema)}.charges_returned where currency = ${currency}`;
  for (const c of j.chargesReturned)
    await tx`insert into ${tx(schema)}.charges_returned values (${c.id}, ${currency}, ${c.charge!.toString()})`;
  if (expected.length) {
    const col = (i: number) => expected.map((r) => r[i]!);
    await tx`insert into ${tx(schema)}.expected
      select * from unnest(${col(0)}::text[], ${col(1)}::text[], ${col(2)}::text[], ${col(3)}::text[], ${col(4)}::numeric[],
        ${col(5)}::numeric[], ${col(6)}::numeric[], ${col(7)}::text[], ${col(8)}::text[],
        ${expected.map((r) => r[9])}::uuid[], ${expected.map((r) => r[10])}::text[])`;
  }
  // one COPY for the currency's matches (a row each, in the judgement's order, as one insert each did)
  await copyRows(
    tx,
    `${ident(schema)}.matches`,
    MATCH_COLUMNS,
    j.matches.map((m) => [
      m.credit.id,
      m.credit.accountId,
      currency,
      m.credit.bookingDate,
      m.credit.bankRef,
      m.credit.amount,
      m.expected,
      m.bankFee,
      m.shortfall,
      m.days.map((d) => d.day),
      m.late.map((l) => l.day),
    ]),
  );
}

const MATCH_COLUMNS = [
  'credit_event_id',
  'account_id',
  'currency',
  'booked_on',
  'bank_ref',
  'received',
  'expected',
  'bank_fee',
  'shortfall',
  'due_on',
  'late_days',
];

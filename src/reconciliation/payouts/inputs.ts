import type postgres from 'postgres';
import { type Position, parsePosition } from '../../store/types';
import { netAsks } from './asks';
import { chargesGivenBack, type ExpectedPayout, type PayoutBankLine } from './match';

/**
 * The inputs of the payout matching as the payouts projection keeps them (projections/payouts.ts): read from
 * its build tables while it applies events, or from its `recon.*` views by a statement cut at a position
 * (only rows written by events at or before it, the directory as it stood then).
 */

export interface InputTables {
  /** the schema the three tables (or views) are in: names, unquoted (the driver quotes them) */
  readonly schema: string;
  /** expected payouts: reference, sub_merchant_id, currency, amount, issued_on, event_id, commit_pos, prepare_pos */
  readonly expected: string;
  /** what corrections say the month's runs now ask in all (tables.ts STILL_ASKED) */
  readonly stillAsked: string;
  /** bank lines of the payouts accounts */
  readonly lines: string;
  /** directory versions: sub_merchant_id, name, payout_account, commit_pos, prepare_pos */
  readonly payees: string;
}

interface ExpectedRow {
  reference: string;
  sub_merchant_id: string;
  currency: string;
  amount: string;
  issued_on: string;
  event_id: string;
  payee_name: string | null;
  payout_account: string | null;
}

interface LineRow {
  event_id: string;
  account_id: string;
  currency: string;
  direction: 'credit' | 'debit';
  amount: string;
  booking_date: string;
  end_to_end_id: string | null;
  remittance: string | null;
  counterparty_name: string | null;
  counterparty_account: string | null;
  is_return: boolean;
  bank_ref: string | null;
  charge: string;
}

export interface PayoutInputs {
  readonly expected: ExpectedPayout[];
  readonly lines: PayoutBankLine[];
}

/** What runs the reads: a transaction or a pool (what both are). */
type Queries = postgres.ISql<{ bigint: bigint }>;

type At = (alias: string) => postgres.PendingQuery<postgres.Row[]>;

/** What each reference still asks once the month's corrections are in (asks.ts); one lowered to nothing is absent. */
async function stillAsks(q: Queries, t: InputTables, at: At): Promise<Map<string, bigint>> {
  const table = (name: string) => q`${q(t.schema)}.${q(name)}`;
  // the asks and the corrections' figures in the order they were issued; an ask before its run's own figure
  const asks = await q<
    {
      reference: string | null;
      sub_merchant_id: string;
      currency: string;
      month: string;
      amount: string;
      still: string | null;
      cut: string | null;
    }[]
  >`select * from (
      select e.reference, e.sub_merchant_id, e.currency, e.month, e.amount::text as amount, null::text as still,
             null::text as cut, e.commit_pos, e.prepare_pos from ${table(t.expected)} e where true ${at('e')}
      union all
      select null, s.sub_merchant_id, s.currency, s.month, '0', s.still_asked::text, s.cut, s.commit_pos, s.prepare_pos
      from ${table(t.stillAsked)} s where true ${at('s')}) a
    order by commit_pos, prepare_pos, reference nulls last, sub_merchant_id, currency`;
  return netAsks(
    asks.map((r) => ({
      subMerchantId: r.sub_merchant_id,
      currency: r.currency,
      month: r.month,
      reference: r.reference,
      payable: BigInt(r.amount),
      stillAsked: r.still === null ? null : BigInt(r.still),
      cut: r.cut === null ? null : parsePosition(r.cut),
    })),
  );
}

export async function loadPayoutInputs(q: Queries, t: InputTables, cut?: Position): Promise<PayoutInputs> {
  const table = (name: string) => q`${q(t.schema)}.${q(name)}`;
  // only the rows written at or before the cut, when there is one
  const at = (alias: string) =>
    cut
      ? q`and (${q(alias)}.commit_pos, ${q(alias)}.prepare_pos) <= (${cut.commit.toString()}::numeric, ${cut.prepare.toString()}::numeric)`
      : q``;
  const expected = await q<ExpectedRow[]>`with payee as (
       select distinct on (sub_merchant_id) sub_merchant_id, name, payout_account from ${table(t.payees)} v
       where true ${at('v')} order by sub_merchant_id, commit_pos desc, prepare_pos desc)
     select e.reference, e.sub_merchant_id, e.currency, e.amount::text as amount, to_char(e.issued_on, 'YYYY-MM-DD') as issued_on,
            e.event_id::text as event_id, p.name as payee_name, p.payout_account
     from ${table(t.expected)} e left join payee p on p.sub_merchant_id = e.sub_merchant_id
     where true ${at('e')}`;
  const still = await stillAsks(q, t, at);
  const lines = await q<
    LineRow[]
  >`select l.event_id::text as event_id, l.account_id, l.currency, l.direction, l.amount::text as amount,
            to_char(l.booking_date, 'YYYY-MM-DD') as booking_date, l.end_to_end_id, l.remittance, l.counterparty_name,
            l.counterparty_account, l.is_return, l.bank_ref, l.charge::text as charge
     from ${table(t.lines)} l where true ${at('l')}`;
  return {
    // an ask lowered to nothing stays, at 0: a debit that paid it before it was lowered is still a payout to
    // its receiver (matched, booked, paid out), beyond what is asked; unpaid, it is judged nothing (judge.ts)
    expected: expected.map((r) => ({
      reference: r.reference,
      subMerchantId: r.sub_merchant_id,
      currency: r.currency,
      amount: still.get(r.reference) ?? 0n,
      issuedOn: r.issued_on,
      payeeAccount: r.payout_account,
      payeeName: r.payee_name ?? r.sub_merchant_id,
      eventId: r.event_id,
    })),
    // a return of a debit whole gives back its folded charge too, never the payee's
    lines: chargesGivenBack(
      lines.map((r) => ({
        id: r.event_id,
        accountId: r.account_id,
        currency: r.currency,
        direction: r.direction,
        amount: BigInt(r.amount),
        bookingDate: r.booking_date,
        endToEndId: r.end_to_end_id,
        remittance: r.remittance,
        counterpartyName: r.counterparty_name,
        counterpartyAccount: r.counterparty_account,
        isReturn: r.is_return,
        bankRef: r.bank_ref,
        charge: BigInt(r.charge),
      })),
    ),
  };
}

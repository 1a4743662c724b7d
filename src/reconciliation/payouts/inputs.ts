import type postgres from 'postgres';
import type { Position } from '../../store/types';
import type { ExpectedPayout, PayoutBankLine } from './match';

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
}

export interface PayoutInputs {
  readonly expected: ExpectedPayout[];
  readonly lines: PayoutBankLine[];
}

/** What runs the reads: a transaction or a pool (what both are). */
type Queries = postgres.ISql<{ bigint: bigint }>;

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
  const lines = await q<
    LineRow[]
  >`select l.event_id::text as event_id, l.account_id, l.currency, l.direction, l.amount::text as amount,
            to_char(l.booking_date, 'YYYY-MM-DD') as booking_date, l.end_to_end_id, l.remittance, l.counterparty_name,
            l.counterparty_account, l.is_return, l.bank_ref
     from ${table(t.lines)} l where true ${at('l')}`;
  return {
    expected: expected.map((r) => ({
      reference: r.reference,
      subMerchantId: r.sub_merchant_id,
      currency: r.currency,
      amount: BigInt(r.amount),
      issuedOn: r.issued_on,
      payeeAccount: r.payout_account,
      payeeName: r.payee_name ?? r.sub_merchant_id,
      eventId: r.event_id,
    })),
    lines: lines.map((r) => ({
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
    })),
  };
}

import type { Position } from '../../store/types';
import type { ExpectedPayout, PayoutBankLine } from './match';

/**
 * The inputs of the payout matching as the payouts projection keeps them (projections/payouts.ts): read from
 * its build tables while it applies events, or from its `recon.*` views by a statement cut at a position
 * (only rows written by events at or before it, the directory as it stood then).
 */

/** Something that runs SQL text with parameters: a transaction or a pool. */
export interface SqlText {
  // biome-ignore lint/suspicious/noExplicitAny: postgres.js types its rows per call; the rows are typed below
  unsafe(query: string, params?: any[]): PromiseLike<any>;
}

export interface InputTables {
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

export async function loadPayoutInputs(q: SqlText, t: InputTables, cut?: Position): Promise<PayoutInputs> {
  const params = cut ? [cut.commit.toString(), cut.prepare.toString()] : [];
  const at = (alias: string) =>
    cut ? `and (${alias}.commit_pos, ${alias}.prepare_pos) <= ($1::numeric, $2::numeric)` : '';
  const expected = (await q.unsafe(
    `with payee as (
       select distinct on (sub_merchant_id) sub_merchant_id, name, payout_account from ${t.payees} v
       where true ${at('v')} order by sub_merchant_id, commit_pos desc, prepare_pos desc)
     select e.reference, e.sub_merchant_id, e.currency, e.amount::text as amount, to_char(e.issued_on, 'YYYY-MM-DD') as issued_on,
            e.event_id::text as event_id, p.name as payee_name, p.payout_account
     from ${t.expected} e left join payee p on p.sub_merchant_id = e.sub_merchant_id
     where true ${at('e')}`,
    params,
  )) as ExpectedRow[];
  const lines = (await q.unsafe(
    `select l.event_id::text as event_id, l.account_id, l.currency, l.direction, l.amount::text as amount,
            to_char(l.booking_date, 'YYYY-MM-DD') as booking_date, l.end_to_end_id, l.remittance, l.counterparty_name,
            l.counterparty_account, l.is_return, l.bank_ref
     from ${t.lines} l where true ${at('l')}`,
    params,
  )) as LineRow[];
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

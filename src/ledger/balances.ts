import type { Sql } from '../db/connect';
import type { Position } from '../store/types';
import { type LedgerAccount, posParams, receiversOf, type Sum } from './ledger-queries';

/** Balances read from the journal's lines: a sub-merchant's account (the console), and the trial balance. */

/**
 * Balance of a sub-merchant's account just before `at` (lines dated strictly earlier), credit positive:
 * payable (net owed), reserve (held), fees (charged to date).
 */
export async function ledgerBalance(
  sql: Sql,
  opts: { subMerchantId: string; currency: string; account: LedgerAccount; at: Date; atPosition?: Position },
): Promise<bigint> {
  const names = await receiversOf(sql, opts.subMerchantId, opts.atPosition);
  if (names.length === 0) return 0n;
  const account = opts.account === 'fees' ? 'psp_fees' : opts.account;
  const params: unknown[] = [names, opts.currency, account, opts.at, ...posParams(opts.atPosition)];
  const posCond = opts.atPosition ? `and (l.commit_pos, l.prepare_pos) <= ($5::numeric, $6::numeric)` : '';
  const [row] = await sql.unsafe<{ balance: Sum }[]>(
    `
    select coalesce(sum(-l.amount), 0) as balance from recon.journal_lines l
    where l.receiver_name = any($1::text[]) and l.currency = $2 and l.account = $3 and l.booked_at < $4 ${posCond}`,
    params as never[],
  );
  return BigInt(row?.balance ?? 0n);
}

/** Totals of every line per account and currency (a trial balance): each currency sums to zero. */
export async function trialBalance(
  sql: Sql,
  opts: { atPosition?: Position } = {},
): Promise<Array<{ account: string; currency: string; balance: bigint }>> {
  const params = posParams(opts.atPosition);
  const rows = await sql.unsafe<{ account: string; currency: string; balance: Sum }[]>(
    `
    select account, currency, sum(amount) as balance from recon.journal_lines l
    where true ${opts.atPosition ? 'and (l.commit_pos, l.prepare_pos) <= ($1::numeric, $2::numeric)' : ''}
    group by account, currency order by currency, account`,
    params as never[],
  );
  return rows.map((r) => ({ account: r.account, currency: r.currency, balance: BigInt(r.balance) }));
}

import { normalizeAccountId } from '../config/bank';
import { BankEntryBooked } from '../events/bank-events';
import { dataOf, isEvent } from '../events/catalog';
import type { ProjectionContext, Tx } from '../projector/projection';
import { deductedChargeOf, foldedChargeOf, isBankCharge } from '../reconciliation/bank-charges';
import type { BankCredit, SettlementJudgement } from '../reconciliation/settlement/match';
import { bankOf } from '../reconciliation/settlement/state';
import type { RecordedEvent } from '../store/types';
import { type BankEntry, copyBankEntries, noEntries, type WrittenEntries, writeBankEntry } from './bank-entries';

/**
 * The bank's own charges on the marketplace's accounts (docs/bank.md, "Bank charges"): a line of a configured
 * `settlement` or `payouts` account whose transaction code says it is a charge (src/reconciliation/bank-charges.ts)
 * is an expense, booked once on its booking day, kind `bank_charge`, component `bank_charge`:
 *   charge (debit)           bank_fees +amount / bank:<account id> −amount
 *   charge refunded (credit) bank_fees −amount / bank:<account id> +amount
 * It concerns no sub-merchant and is never matched as a settlement or a payout. A charge the bank folded into
 * a debit of a `payouts` account (`foldedChargeOf`), or deducted from a credit of a `settlement` account
 * (`deductedChargeOf`), is booked the same way, for the charge alone (an expense either way); the rest of the line
 * is the payout (src/reconciliation/payouts/tables.ts), and the credit pays at what the PSP sent
 * (src/reconciliation/settlement/state.ts). Whether a line is or holds a charge depends on
 * the line and the build's bank settings alone; only a deducted charge is reversed, when the bank takes its
 * credit back at what it credited (`bringChargeReturns`).
 */
export function chargeEntryOf(e: RecordedEvent, ctx: ProjectionContext): BankEntry | null {
  if (!isEvent(BankEntryBooked, e)) return null;
  const bank = bankOf(ctx);
  const d = dataOf(BankEntryBooked, e);
  const accountId = normalizeAccountId(d.accountId);
  const account = bank.accounts.find((a) => a.id === accountId);
  if (account === undefined) return null;
  // on a settlement account a debit is no payout (a sweep, not booked): its folded charge is not split from it;
  // a settlement credit's deducted charge is (the credit pays the PSP's day at what the PSP sent)
  const folded =
    account.role === 'payouts'
      ? foldedChargeOf(d, bank.charges)
      : account.role === 'settlement'
        ? deductedChargeOf(d, bank.charges)
        : 0n;
  if (folded === 0n && !isBankCharge(d.transactionCode, bank.charges)) return null;
  const amount = folded === 0n ? BigInt(d.amount) : folded;
  // a charge taken out of a transfer is an expense whatever the transfer's direction; a charge line of its own
  // is one as a debit, refunded as a credit
  const fee = folded > 0n || d.direction === 'debit' ? amount : -amount;
  return chargeEntry(e.id, d.accountId, d.currency, d.bookingDate, amount, fee);
}

function chargeEntry(
  lineId: string,
  accountId: string,
  currency: string,
  bookedOn: string,
  share: bigint,
  fee: bigint,
) {
  return {
    kind: 'bank_charge',
    rowKey: `charge:${lineId}`,
    accountId,
    lineId,
    method: 'bank_charge',
    status: 'charge',
    receiver: null,
    currency,
    share,
    fee: 0n,
    net: 0n,
    bookedOn,
    lines: [
      { account: 'bank_fees', component: 'bank_charge', amount: fee },
      { account: `bank:${accountId}`, component: 'bank_charge', amount: -fee },
    ],
  } satisfies BankEntry;
}

/**
 * The deducted charges whose booking moved since the credit booked it (entry `<credit>:c0`): `entry_id` is the
 * charge's booking in force (`c0`, or the one booked again), `returned` whether that booking is reversed now.
 */
export function chargeReturnTables(s: string): string {
  return `
    create table ${s}.cash_charges (credit_event_id uuid primary key, currency text not null, account_id text not null,
      booked_on text not null, charge int8 not null, entry_id text not null, returned boolean not null);`;
}

interface MovedCharge {
  readonly accountId: string;
  readonly bookedOn: string;
  readonly charge: bigint;
  readonly entryId: string;
  readonly returned: boolean;
}

/** Per currency, the rows of cash_charges by credit, read once per batch and then changed with the table. */
export type ChargeMemory = Map<string, Map<string, MovedCharge>>;

async function movedCharges(tx: Tx, schema: string, currency: string, memory: ChargeMemory) {
  let held = memory.get(currency);
  if (held) return held;
  const rows = await tx<
    { id: string; account_id: string; booked_on: string; charge: bigint; entry_id: string; returned: boolean }[]
  >`
    select credit_event_id::text as id, account_id, booked_on, charge, entry_id, returned from ${tx(schema)}.cash_charges
    where currency = ${currency}`;
  held = new Map(
    rows.map((r) => [
      r.id,
      {
        accountId: r.account_id,
        bookedOn: r.booked_on,
        charge: BigInt(r.charge),
        entryId: r.entry_id,
        returned: r.returned,
      },
    ]),
  );
  memory.set(currency, held);
  return held;
}

/**
 * A settlement credit's deducted charge follows the credit (docs/bank.md, "A charge deducted from a settlement
 * credit"): when the bank takes the credit back at what it credited (`chargesReturned`), the account holds
 * nothing of it, so the charge's booking in force is reversed (dated as the original); when that return no
 * longer cancels it (it cancels another credit now), the charge is booked again. In credit order, by the event
 * `by` of the append, so a rebuild in any batch size books the same entries.
 */
export async function bringChargeReturns(
  tx: Tx,
  schema: string,
  currency: string,
  j: SettlementJudgement,
  by: RecordedEvent,
  out: WrittenEntries,
  next: () => number,
  memory: ChargeMemory,
  tz: string,
): Promise<void> {
  const moved = await movedCharges(tx, schema, currency, memory);
  const want = new Map<string, BankCredit>(j.chargesReturned.map((c) => [c.id, c]));
  const todo = new Set([...want.keys(), ...[...moved].filter(([, m]) => m.returned).map(([k]) => k)]);
  for (const id of [...todo].sort()) {
    const was = moved.get(id);
    const c = want.get(id);
    if (c && was?.returned) continue;
    const m = c
      ? { accountId: c.accountId, bookedOn: c.bookingDate, charge: c.charge!, entryId: was?.entryId ?? `${id}:c0` }
      : was!;
    const entry = chargeEntry(id, m.accountId, currency, m.bookedOn, m.charge, m.charge);
    const entryId = `${by.id}:${c ? 'cr' : 'cb'}${next()}`;
    writeBankEntry(out, entryId, entry, by, c ? m.entryId : null, tz);
    const now: MovedCharge = { ...m, entryId: c ? m.entryId : entryId, returned: c !== undefined };
    moved.set(id, now);
    await tx`insert into ${tx(schema)}.cash_charges values (${id}, ${currency}, ${now.accountId}, ${now.bookedOn},
        ${now.charge.toString()}, ${now.entryId}, ${now.returned})
      on conflict (credit_event_id) do update set entry_id = excluded.entry_id, returned = excluded.returned`;
  }
}

export async function bookBankCharges(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  if (bankOf(ctx).accounts.length === 0) return;
  const out = noEntries();
  for (const e of events) {
    const entry = chargeEntryOf(e, ctx);
    if (entry) writeBankEntry(out, `${e.id}:c0`, entry, e, null, ctx.timezone);
  }
  if (out.entries.length) await copyBankEntries(tx, ctx.schema, out);
}

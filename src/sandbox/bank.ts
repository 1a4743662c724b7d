import { DateTime } from 'luxon';
import { addBusinessDays } from '../business-days';
import type { InjectedBy } from '../reconciliation/discrepancies/registry';
import type { Operation } from './model';
import { createRng, hashSeed } from './random';
import type { Scenario } from './scenario';

/**
 * The sandbox's bank: the marketplace's accounts at its bank, as the bank's statements would show them.
 * The PSP pays each settlement day's net into the settlement account of its currency; sub-merchants are
 * paid from the payouts account. Faults are injected with their ground truth: one settlement short, one
 * late, one statement that does not foot; one payout missing, one paid twice, one returned. The bank takes its
 * charges from the accounts (accountCharges), which are bank fees, not faults; and it folds its charge into
 * one payout's debit, saying so in the camt (foldedCharges: recon splits it, a bank fee, no fault either). Statements are
 * plain data (`BankFileStatement`-like, rendered to camt.053 / MT940 by src/sandbox/bank-files.ts); the
 * world is a pure function of the scenario and the options, never of the clock.
 *
 * What the PSP pays is computed here as the PSP would, from the scenario's operations as its register
 * shows them, independently of recon's journal: a success sale pays share − fee, a refund or chargeback
 * takes back share + fee, on the local day of the operation; a settlement day pays every day whose
 * settlement falls on it; a day whose net is not positive is carried into the next one.
 */

export interface BankWorldEntry {
  readonly bookingDate: string;
  readonly valueDate: string;
  readonly direction: 'credit' | 'debit';
  /** positive minor units */
  readonly amount: bigint;
  readonly bankRef: string;
  readonly endToEndId: string | null;
  readonly remittance: string | null;
  readonly counterpartyName: string | null;
  readonly counterpartyAccount: string | null;
  readonly isReturn: boolean;
  /** consecutive entries with one batchRef are the details of one booking (a batch); null: a single entry */
  readonly batchRef: string | null;
  /** the bank's transaction code when it is not a plain transfer: a charge's (camt ACMT/MDOP/CHRG, GVC 805) */
  readonly transactionCode?: string;
  /**
   * the bank's charge folded into this debit: `amount` is the transfer plus it (camt `TxAmt` + `Chrgs`); a
   * transfer the bank books on its own, never in a payment run
   */
  readonly foldedCharge?: bigint;
}

export interface BankWorldStatement {
  readonly account: string;
  readonly currency: string;
  readonly statementId: string;
  /** the statement's sequence number for the account (MT940 :28C:, camt ElctrncSeqNb) */
  readonly sequence: number;
  readonly openingDate: string;
  readonly closingDate: string;
  /** signed minor units */
  readonly openingBalance: bigint;
  readonly closingBalance: bigint;
  readonly entries: readonly BankWorldEntry[];
}

/** An expected payout as the statement run issues it (h16-payouts derives these from statements). */
export interface ExpectedPayout {
  readonly reference: string;
  readonly subMerchantId: string;
  readonly payeeAccount: string;
  readonly payeeName: string;
  readonly currency: string;
  readonly amount: bigint;
  /** local day the statement was issued (YYYY-MM-DD) */
  readonly issuedOn: string;
}

/** A type the registry says the bank injects (src/reconciliation/discrepancies/registry.ts): no copy of a name. */
type Injected<T extends InjectedBy<'bank'>> = T;

export type BankTruth =
  | {
      readonly type: Injected<'settlement_short'>;
      readonly currency: string;
      readonly dueOn: string;
      readonly expected: bigint;
      readonly received: bigint;
    }
  | {
      readonly type: Injected<'settlement_late'>;
      readonly currency: string;
      readonly dueOn: string;
      readonly receivedOn: string;
    }
  | { readonly type: Injected<'payout_missing'>; readonly reference: string }
  | { readonly type: Injected<'payout_duplicate'>; readonly reference: string; readonly bankRef: string }
  | { readonly type: Injected<'payout_returned'>; readonly reference: string; readonly bankRef: string }
  | {
      readonly type: 'statement_unbalanced';
      readonly account: string;
      readonly statementId: string;
      readonly difference: bigint;
    };

export interface BankWorldOptions {
  /** per currency: the settlement account the PSP pays into and the payouts account (IBAN or number) */
  readonly accounts: Readonly<Record<string, { readonly settlement: string; readonly payouts: string }>>;
  readonly lagBusinessDays?: number;
  readonly holidays?: readonly string[];
  /** per currency: recon's tolerance; the short settlement falls well beyond it */
  readonly tolerance?: Readonly<Record<string, bigint>>;
  readonly payouts?: readonly ExpectedPayout[];
  /** name the PSP's credits carry */
  readonly pspName?: string;
  readonly pspAccount?: string;
}

export interface BankWorld {
  /** balanced statements: one per account and business day with entries, in account and date order */
  readonly statements: readonly BankWorldStatement[];
  /** the injected statement that does not foot (an import must refuse it whole) */
  readonly faultyStatements: readonly BankWorldStatement[];
  /** what the PSP owes per currency and settlement day */
  readonly settlements: ReadonlyArray<{ readonly currency: string; readonly dueOn: string; readonly amount: bigint }>;
  readonly truth: readonly BankTruth[];
  /** credits short by no more than the tolerance: a bank charge recon books as a bank fee, no discrepancy */
  readonly bankCharges: ReadonlyArray<{ readonly currency: string; readonly dueOn: string; readonly charge: bigint }>;
  /** the bank's charges folded into a payout's debit (stated in the camt): bank fees, the payout paid in full */
  readonly foldedCharges: ReadonlyArray<{
    readonly account: string;
    readonly currency: string;
    readonly bookingDate: string;
    readonly amount: bigint;
    readonly reference: string;
  }>;
  /** the bank's own charges booked as lines of their own: bank fees, never payouts nor settlements */
  readonly accountCharges: ReadonlyArray<{
    readonly account: string;
    readonly currency: string;
    readonly bookingDate: string;
    readonly amount: bigint;
    readonly transactionCode: string;
  }>;
}

const SALE = new Set(['purchase', 'capture', 'recurrent']);
const TAKE_BACK = new Set(['refund', 'dispute']);

/** The PSP's net effect of one operation (positive: it owes the marketplace more). */
export function pspNetOf(op: Operation): bigint {
  if (op.status !== 'success') return 0n;
  if (op.distortion?.kind === 'omit' && op.distortion.source === 'register') return 0n;
  const sign = SALE.has(op.method) ? 1n : TAKE_BACK.has(op.method) ? -1n : 0n;
  if (sign === 0n) return 0n;
  if (op.receivers.length === 0) return sign * op.originalAmount - op.merchantFee;
  const d = op.distortion;
  let net = 0n;
  op.receivers.forEach((r, i) => {
    const amount = d?.kind === 'receiver_amount' && d.receiverIndex === i ? d.value : r.amount;
    net += sign * (amount + r.fee) - r.fee;
  });
  return net;
}

/** Per currency and settlement day, what the PSP pays (days that net to ≤ 0 carried forward). */
export function pspSettlements(
  scenario: Scenario,
  lag: number,
  holidays: ReadonlySet<string>,
): Array<{ currency: string; dueOn: string; amount: bigint; from: string; to: string }> {
  const byDay = new Map<string, bigint>();
  for (const op of scenario.operations()) {
    const net = pspNetOf(op);
    if (net === 0n) continue;
    const day = DateTime.fromMillis(op.at, { zone: scenario.timezone }).toISODate()!;
    const k = `${op.currency}|${day}`;
    byDay.set(k, (byDay.get(k) ?? 0n) + net);
  }
  const byDue = new Map<string, { amount: bigint; from: string; to: string }>();
  for (const [k, net] of [...byDay].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const [currency, day] = k.split('|') as [string, string];
    const key = `${currency}|${addBusinessDays(day, lag, holidays)}`;
    const g = byDue.get(key);
    if (g) {
      g.amount += net;
      g.to = day;
    } else byDue.set(key, { amount: net, from: day, to: day });
  }
  const out: Array<{ currency: string; dueOn: string; amount: bigint; from: string; to: string }> = [];
  const carry = new Map<string, { amount: bigint; from: string }>();
  for (const [k, g] of [...byDue].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const [currency, dueOn] = k.split('|') as [string, string];
    const c = carry.get(currency);
    const amount = g.amount + (c?.amount ?? 0n);
    const from = c?.from ?? g.from;
    if (amount <= 0n) {
      carry.set(currency, { amount, from });
      continue;
    }
    carry.delete(currency);
    out.push({ currency, dueOn, amount, from, to: g.to });
  }
  return out;
}

interface Draft {
  readonly account: string;
  readonly currency: string;
  readonly entry: BankWorldEntry;
}

function settlementCredits(
  scenario: Scenario,
  opts: BankWorldOptions,
  holidays: ReadonlySet<string>,
): { drafts: Draft[]; truth: BankTruth[]; charges: BankWorld['bankCharges']; due: BankWorld['settlements'] } {
  const due = pspSettlements(scenario, opts.lagBusinessDays ?? 1, holidays).filter((d) => opts.accounts[d.currency]);
  const rng = createRng(hashSeed(scenario.seed, 'bank', 'settlements'));
  // faults on days big enough that a short credit is still most of the day, and never on neighbours
  const last = new Map(due.map((d) => [d.currency, d.dueOn]));
  const eligible = due
    .map((d, i) => ({ d, i }))
    .filter(({ d }) => d.amount >= 10_000n && d.dueOn !== last.get(d.currency));
  const picked: number[] = [];
  for (let attempt = 0; picked.length < 3 && attempt < 500 && eligible.length; attempt++) {
    const { i } = rng.pick(eligible);
    if (picked.every((p) => Math.abs(p - i) > 1)) picked.push(i);
  }
  const [shortAt, lateAt, chargeAt] = picked;
  const drafts: Draft[] = [];
  const truth: BankTruth[] = [];
  const charges: Array<{ currency: string; dueOn: string; charge: bigint }> = [];
  due.forEach((d, i) => {
    const tol = opts.tolerance?.[d.currency] ?? 0n;
    let amount = d.amount;
    let on = d.dueOn;
    if (i === shortAt) {
      const shortfall = tol + 1n > d.amount / 20n ? tol + 1n : d.amount / 20n;
      amount = d.amount - shortfall;
      truth.push({
        type: 'settlement_short',
        currency: d.currency,
        dueOn: d.dueOn,
        expected: d.amount,
        received: amount,
      });
    } else if (i === lateAt) {
      on = addBusinessDays(d.dueOn, 1, holidays);
      truth.push({ type: 'settlement_late', currency: d.currency, dueOn: d.dueOn, receivedOn: on });
    } else if (i === chargeAt && tol > 0n) {
      amount = d.amount - tol;
      charges.push({ currency: d.currency, dueOn: d.dueOn, charge: tol });
    }
    drafts.push({
      account: opts.accounts[d.currency]!.settlement,
      currency: d.currency,
      entry: {
        bookingDate: on,
        valueDate: on,
        direction: 'credit',
        amount,
        bankRef: `S${hashSeed(scenario.seed, 'settlement', d.currency, d.dueOn).toString(16).padStart(8, '0')}`,
        endToEndId: `STL-${d.currency}-${d.dueOn}`,
        remittance: `SETTLEMENT ${d.currency} ${d.from} TO ${d.to}`,
        counterpartyName: opts.pspName ?? 'PSP SETTLEMENTS',
        counterpartyAccount: opts.pspAccount ?? 'GB33BUKB20201555555555',
        isReturn: false,
        batchRef: null,
      },
    });
  });
  return { drafts, truth, charges, due: due.map((d) => ({ currency: d.currency, dueOn: d.dueOn, amount: d.amount })) };
}

/** The charge the bank folds into one payout's debit (minor units). */
const FOLDED_CHARGE = 150n;

function payoutDebits(
  scenario: Scenario,
  opts: BankWorldOptions,
  holidays: ReadonlySet<string>,
): { drafts: Draft[]; truth: BankTruth[] } {
  const payouts = [...(opts.payouts ?? [])]
    .filter((p) => opts.accounts[p.currency])
    .sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0));
  const rng = createRng(hashSeed(scenario.seed, 'bank', 'payouts'));
  const order = payouts.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const k = rng.int(0, i);
    [order[i], order[k]] = [order[k]!, order[i]!];
  }
  const [missingAt, duplicateAt, returnedAt, foldedAt] = order;
  const drafts: Draft[] = [];
  const truth: BankTruth[] = [];
  const ref = (p: ExpectedPayout, n: number) =>
    `P${hashSeed(scenario.seed, 'payout', p.reference, n).toString(16).padStart(8, '0')}`;
  payouts.forEach((p, i) => {
    if (i === missingAt) {
      truth.push({ type: 'payout_missing', reference: p.reference });
      return;
    }
    const account = opts.accounts[p.currency]!.payouts;
    const debit = (on: string, n: number, direction: 'credit' | 'debit' = 'debit', isReturn = false): Draft => ({
      account,
      currency: p.currency,
      entry: {
        bookingDate: on,
        valueDate: on,
        direction,
        amount: p.amount,
        bankRef: ref(p, n),
        endToEndId: `PO-${p.reference}`,
        remittance: isReturn ? `RETURN ${p.reference} ACCOUNT CLOSED` : p.reference,
        counterpartyName: p.payeeName,
        counterpartyAccount: p.payeeAccount,
        isReturn,
        batchRef: null,
      },
    });
    const on = addBusinessDays(p.issuedOn, 1, holidays);
    const first = debit(on, 0);
    drafts.push(
      i === foldedAt
        ? { ...first, entry: { ...first.entry, amount: p.amount + FOLDED_CHARGE, foldedCharge: FOLDED_CHARGE } }
        : first,
    );
    if (i === duplicateAt) {
      const again = debit(addBusinessDays(on, 1, holidays), 1);
      drafts.push(again);
      truth.push({ type: 'payout_duplicate', reference: p.reference, bankRef: again.entry.bankRef });
    } else if (i === returnedAt) {
      const back = debit(addBusinessDays(on, 3, holidays), 2, 'credit', true);
      drafts.push(back);
      truth.push({ type: 'payout_returned', reference: p.reference, bankRef: back.entry.bankRef });
    }
  });
  return { drafts, truth };
}

/** Debits of one account booked on one day form one batch when there are several (a payment run). */
function batched(entries: BankWorldEntry[], account: string): BankWorldEntry[] {
  // a charge is the bank's own line, never part of the payment run
  const inRun = (e: BankWorldEntry) =>
    e.direction === 'debit' && !e.isReturn && !e.transactionCode && e.foldedCharge === undefined;
  const debits = entries.filter(inRun);
  if (debits.length < 2) return entries;
  const batchRef = `B-${account.slice(-6)}-${debits[0]!.bookingDate}`;
  return [...debits.map((e) => ({ ...e, batchRef })), ...entries.filter((e) => !inRun(e))];
}

/**
 * The bank's charges, each a line of its own: on every payouts account, a commission for the transfers of
 * each payment run (camt PMNT/ICDT/CHRG) and the account's maintenance after the last one (ACMT/MDOP/CHRG);
 * on every settlement account, the account's charges on its last day (MT940 GVC 805). Small amounts, so that
 * they never look like a payout or a settlement.
 */
function chargeDrafts(drafts: readonly Draft[], opts: BankWorldOptions): Draft[] {
  const out: Draft[] = [];
  const charge = (d: Draft, on: string, amount: bigint, code: string, text: string, n: number): Draft => ({
    account: d.account,
    currency: d.currency,
    entry: {
      bookingDate: on,
      valueDate: on,
      direction: 'debit',
      amount,
      bankRef: `C${hashSeed('charge', d.account, on, n).toString(16).padStart(8, '0')}`,
      endToEndId: null,
      remittance: text,
      counterpartyName: null,
      counterpartyAccount: null,
      isReturn: false,
      batchRef: null,
      transactionCode: code,
    },
  });
  const payoutsAccounts = new Set(Object.values(opts.accounts).map((a) => a.payouts));
  for (const account of [...new Set(drafts.map((d) => d.account))].sort()) {
    const mine = drafts.filter((d) => d.account === account);
    const days = [...new Set(mine.map((d) => d.entry.bookingDate))].sort();
    const last = mine.find((d) => d.entry.bookingDate === days[days.length - 1])!;
    if (payoutsAccounts.has(account)) {
      for (const day of days) {
        const transfers = mine.filter((d) => d.entry.bookingDate === day && d.entry.direction === 'debit').length;
        if (transfers > 0)
          out.push(
            charge(last, day, 25n * BigInt(transfers), 'PMNT/ICDT/CHRG', `COMMISSION ${transfers} TRANSFERS`, 0),
          );
      }
      out.push(charge(last, days[days.length - 1]!, 500n, 'ACMT/MDOP/CHRG', 'ACCOUNT MAINTENANCE FEE', 1));
    } else out.push(charge(last, days[days.length - 1]!, 300n, '805', 'KONTOFUEHRUNG ENTGELT', 2));
  }
  return out;
}

function statementsOf(drafts: readonly Draft[], opening: ReadonlyMap<string, bigint>): BankWorldStatement[] {
  const byAccount = new Map<string, Draft[]>();
  for (const d of drafts) byAccount.set(d.account, [...(byAccount.get(d.account) ?? []), d]);
  const out: BankWorldStatement[] = [];
  for (const account of [...byAccount.keys()].sort()) {
    const list = byAccount.get(account)!;
    const currency = list[0]!.currency;
    const days = [...new Set(list.map((d) => d.entry.bookingDate))].sort();
    let balance = opening.get(account) ?? 0n;
    let from = days[0]!;
    days.forEach((day, n) => {
      const raw = list
        .filter((d) => d.entry.bookingDate === day)
        .map((d) => d.entry)
        .sort((a, b) => (a.bankRef < b.bankRef ? -1 : 1));
      const entries = batched(raw, account);
      const closing = entries.reduce((s, e) => s + (e.direction === 'credit' ? e.amount : -e.amount), balance);
      out.push({
        account,
        currency,
        statementId: `${account.slice(-6)}-${day}`,
        sequence: n + 1,
        openingDate: from,
        closingDate: day,
        openingBalance: balance,
        closingBalance: closing,
        entries,
      });
      balance = closing;
      from = DateTime.fromISO(day, { zone: 'UTC' }).plus({ days: 1 }).toISODate()!;
    });
  }
  return out;
}

export function bankWorld(scenario: Scenario, opts: BankWorldOptions): BankWorld {
  const holidays = new Set(opts.holidays ?? []);
  const s = settlementCredits(scenario, opts, holidays);
  const p = payoutDebits(scenario, opts, holidays);
  // payouts accounts are funded beforehand with what they will pay, and a margin
  const opening = new Map<string, bigint>();
  for (const x of opts.payouts ?? [])
    if (opts.accounts[x.currency]) {
      const a = opts.accounts[x.currency]!.payouts;
      opening.set(a, (opening.get(a) ?? 1_000_000n) + 2n * x.amount);
    }
  const charges = chargeDrafts([...s.drafts, ...p.drafts], opts);
  const statements = statementsOf([...s.drafts, ...p.drafts, ...charges], opening);
  const first = statements.find((x) => x.entries.some((e) => e.direction === 'credit'));
  const faultyStatements = first
    ? [{ ...first, statementId: `${first.statementId}-R`, closingBalance: first.closingBalance + 100n }]
    : [];
  const truth: BankTruth[] = [...s.truth, ...p.truth];
  if (first)
    truth.push({
      type: 'statement_unbalanced',
      account: first.account,
      statementId: `${first.statementId}-R`,
      difference: 100n,
    });
  const accountCharges = charges.map((c) => ({
    account: c.account,
    currency: c.currency,
    bookingDate: c.entry.bookingDate,
    amount: c.entry.amount,
    transactionCode: c.entry.transactionCode!,
  }));
  const foldedCharges = p.drafts.flatMap((d) =>
    d.entry.foldedCharge === undefined
      ? []
      : [
          {
            account: d.account,
            currency: d.currency,
            bookingDate: d.entry.bookingDate,
            amount: d.entry.foldedCharge,
            reference: d.entry.remittance!,
          },
        ],
  );
  return {
    statements,
    faultyStatements,
    settlements: s.due,
    truth,
    bankCharges: s.charges,
    accountCharges,
    foldedCharges,
  };
}

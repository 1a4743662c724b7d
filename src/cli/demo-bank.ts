import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type BankConfig, bankConfigFrom, bankConfigSchema } from '../config/bank';
import type { Sql } from '../db/connect';
import { BankImportRefused, importBankFiles } from '../ingest/bank/import';
import { knownEventsOf } from '../ingest/bank/known-events';
import { hashSeed } from '../sandbox/random';
import {
  type BankTruth,
  type BankWorld,
  type BankWorldStatement,
  bankWorld,
  type ExpectedPayout,
} from '../sandbox/bank';
import type { BankFileEntry, BankFileStatement } from '../sandbox/bank-files';
import { renderCamt053, renderMt940 } from '../sandbox/bank-files';
import type { Scenario } from '../sandbox/scenario';
import type { EventStore } from '../store/types';

/**
 * The money leg of `recon demo`: the sandbox's bank (src/sandbox/bank.ts) pays the PSP's settlements into
 * the demo's settlement accounts and the statements' expected payouts out of its payouts accounts; its
 * statements are written as files (MT940 for the settlement accounts, camt.053 for the payouts accounts)
 * and go through the real import (src/ingest/bank). The demo's accounts are its own, like its sandbox PSP:
 * the demo needs no configuration.
 */

const CURRENCIES = ['EUR', 'UAH', 'USD', 'XTS'];
const TOLERANCE: Record<string, bigint> = { EUR: 50n, UAH: 200n, USD: 50n, XTS: 50n };

/** Per currency, the demo's settlement and payouts accounts (test IBANs of the sandbox's bank). */
export const DEMO_ACCOUNTS: Record<string, { settlement: string; payouts: string }> = Object.fromEntries(
  CURRENCIES.map((c, i) => [c, { settlement: `DE8937040044053201300${i}`, payouts: `DE8937040044053201310${i}` }]),
);

export function demoBankConfig(): BankConfig {
  return bankConfigFrom(bankConfigSchema.parse(demoBankSettings()));
}

/** The demo's bank section as RECON_CONFIG writes it (amounts as decimal strings of minor units). */
function demoBankSettings(): Record<string, unknown> {
  return {
    accounts: CURRENCIES.flatMap((c) => [
      { id: DEMO_ACCOUNTS[c]!.settlement, currency: c, role: 'settlement', name: `Demo settlements ${c}` },
      { id: DEMO_ACCOUNTS[c]!.payouts, currency: c, role: 'payouts', name: `Demo payouts ${c}` },
    ]),
    settlement: {
      lagBusinessDays: 1,
      holidays: [],
      tolerance: Object.fromEntries(Object.entries(TOLERANCE).map(([c, v]) => [c, v.toString()])),
      lateBusinessDays: 3,
    },
    // paid within 3 days of issue: the bank world pays one business day after, so its missing payout is
    // overdue by the time its last entry (a return, three business days later) is booked
    payouts: { dueDays: 3, matchWindowDays: 10 },
  };
}

/**
 * Writes `DATA_DIR/demo/recon.json`, a RECON_CONFIG holding the demo's bank accounts and nothing else: commands run
 * after the demo with it read the views as the demo built them (without, they see no bank accounts, and the
 * payouts, settlement and journal views are rebuilt without the bank). Nothing of the user's own RECON_CONFIG is
 * copied: it may hold secrets. The file, or null when it could not be written (the demo goes on without it).
 */
export function writeDemoConfig(dataDir: string): string | null {
  const file = path.resolve(dataDir, 'demo', 'recon.json');
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ bank: demoBankSettings() }, null, 2)}\n`, { mode: 0o600 });
    return file;
  } catch {
    return null;
  }
}

/**
 * The payouts the statement runs still ask for (recon.payouts: an ask a correction lowered is paid lowered, one
 * lowered to nothing not at all), with the payee's name.
 */
export async function expectedPayouts(sql: Sql): Promise<ExpectedPayout[]> {
  const rows = await sql<
    { reference: string; sub_merchant_id: string; currency: string; amount: string; issued_on: string; name: string }[]
  >`select e.reference, e.sub_merchant_id, e.currency, p.amount::text as amount,
       to_char(e.issued_on, 'YYYY-MM-DD') as issued_on, coalesce(s.name, e.sub_merchant_id) as name
     from recon.payout_expected e join recon.payouts p on p.reference = e.reference
     left join recon.sub_merchants s on s.sub_merchant_id = e.sub_merchant_id
     where p.amount > 0
     order by e.reference`;
  return rows.map((r) => ({
    reference: r.reference,
    subMerchantId: r.sub_merchant_id,
    // the directory has no payout accounts: the bank pays to a stand-in account per sub-merchant
    payeeAccount: `UA${String(hashSeed('demo-payee', r.sub_merchant_id)).padStart(27, '0')}`,
    payeeName: r.name,
    currency: r.currency,
    amount: BigInt(r.amount),
    issuedOn: r.issued_on,
  }));
}

/** A world statement as the file writers take it: consecutive details of one batch are one entry. */
export function fileStatement(s: BankWorldStatement, closingOverride?: bigint): BankFileStatement {
  const entries: BankFileEntry[] = [];
  let batch: string | null = null;
  for (const e of s.entries) {
    const detail = {
      // a charge folded into the debit: the transfer's own amount (TxAmt) and the charge, stated
      amount: e.amount - (e.foldedCharge ?? 0n),
      ...(e.foldedCharge !== undefined ? { charges: [{ amount: e.foldedCharge, included: true }] } : {}),
      ...(e.endToEndId ? { endToEndId: e.endToEndId } : {}),
      ...(e.remittance ? { remittance: e.remittance } : {}),
      ...(e.counterpartyName ? { counterpartyName: e.counterpartyName } : {}),
      ...(e.counterpartyAccount ? { counterpartyAccount: e.counterpartyAccount } : {}),
      ...(e.isReturn ? { isReturn: true } : {}),
    };
    const last = entries[entries.length - 1];
    if (e.batchRef !== null && e.batchRef === batch && last) {
      entries[entries.length - 1] = { ...last, amount: last.amount + e.amount, details: [...last.details!, detail] };
      continue;
    }
    batch = e.batchRef;
    entries.push({
      direction: e.direction,
      amount: e.amount,
      bookingDate: e.bookingDate,
      valueDate: e.valueDate,
      bankRef: e.batchRef ?? e.bankRef,
      transactionCode:
        e.transactionCode ??
        (e.isReturn ? 'PMNT/ICDT/RRTN' : e.direction === 'credit' ? 'PMNT/RCDT/ESCT' : 'PMNT/ICDT/ESCT'),
      details: [detail],
    });
  }
  return {
    accountId: s.account,
    currency: s.currency,
    statementId: s.statementId,
    sequence: s.sequence,
    openingDate: s.openingDate,
    closingDate: s.closingDate,
    openingBalance: s.openingBalance,
    ...(closingOverride !== undefined ? { closingOverride } : {}),
    entries,
  };
}

export interface MoneyLoop {
  readonly files: { camt053: number; mt940: number; dir: string };
  readonly imported: { statements: number; entries: number; known: number };
  /** the import's message for the statement that does not foot */
  readonly refused: string;
  readonly truth: readonly BankTruth[];
  /** the bank's own charges on the accounts (bank fees, never payouts nor settlements) */
  readonly charges: BankWorld['accountCharges'];
  /** the bank's charges folded into a payout's debit (bank fees too) */
  readonly foldedCharges: BankWorld['foldedCharges'];
  readonly expectedPayouts: number;
}

/** Builds the bank's statements from the expected payouts, writes them and imports them. */
export async function bankLoop(deps: {
  sql: Sql;
  store: EventStore;
  bank: BankConfig;
  scenario: Scenario;
  outDir: string;
  signal?: AbortSignal;
}): Promise<MoneyLoop> {
  const payouts = await expectedPayouts(deps.sql);
  const s = deps.bank.settlement;
  const world = bankWorld(deps.scenario, {
    accounts: DEMO_ACCOUNTS,
    lagBusinessDays: s.lagBusinessDays,
    holidays: s.holidays,
    tolerance: TOLERANCE,
    payouts,
  });
  const dir = path.join(deps.outDir, 'bank');
  mkdirSync(path.join(dir, 'refused'), { recursive: true });
  const payoutsAccounts = new Set(Object.values(DEMO_ACCOUNTS).map((a) => a.payouts));
  const files: string[] = [];
  let camt053 = 0;
  let mt940 = 0;
  for (const st of world.statements) {
    const asCamt = payoutsAccounts.has(st.account);
    const file = path.join(dir, `${st.statementId}.${asCamt ? 'xml' : 'sta'}`);
    writeFileSync(file, asCamt ? renderCamt053(fileStatement(st)) : renderMt940(fileStatement(st)));
    files.push(file);
    if (asCamt) camt053++;
    else mt940++;
  }
  const options = { accounts: deps.bank.accounts, ...(deps.signal ? { signal: deps.signal } : {}) };
  const known = knownEventsOf(deps.store, deps.sql);
  let refused = '';
  for (const st of world.faultyStatements) {
    const file = path.join(dir, 'refused', `${st.statementId}.xml`);
    writeFileSync(file, renderCamt053(fileStatement(st, st.closingBalance)));
    camt053++;
    try {
      await importBankFiles(deps.store, known, [file], options);
      throw new Error(`the bank import accepted ${file}, a statement that does not foot`);
    } catch (e) {
      if (!(e instanceof BankImportRefused)) throw e;
      refused = e.problems.join('; ');
    }
  }
  const outcomes = await importBankFiles(deps.store, known, files, options);
  return {
    files: { camt053, mt940, dir },
    imported: {
      statements: outcomes.reduce((n, o) => n + o.statements, 0),
      entries: outcomes.reduce((n, o) => n + o.entries, 0),
      known: outcomes.reduce((n, o) => n + o.entriesKnown, 0),
    },
    refused,
    truth: world.truth,
    charges: world.accountCharges,
    foldedCharges: world.foldedCharges,
    expectedPayouts: payouts.length,
  };
}

/** The paid-out lines: every expected payout with what the bank paid on it (recon.payouts). */
export async function paidOutLines(sql: Sql) {
  return sql<
    {
      reference: string;
      payee_name: string;
      currency: string;
      amount: string;
      paid_out: string;
      status: string;
      paid_on: string | null;
    }[]
  >`select reference, payee_name, currency, amount::text, paid_out::text, status, to_char(paid_on, 'YYYY-MM-DD') as paid_on
    from recon.payouts order by reference`;
}

/** The status the bank world gave each expected payout (its ground truth): every one not faulted is paid. */
export function statusTruth(references: readonly string[], truth: readonly BankTruth[]): Record<string, string> {
  const out: Record<string, string> = Object.fromEntries(references.map((r) => [r, 'paid']));
  for (const t of truth) {
    if (t.type === 'payout_missing') out[t.reference] = 'missing';
    else if (t.type === 'payout_duplicate') out[t.reference] = 'duplicated';
    else if (t.type === 'payout_returned') out[t.reference] = 'returned';
  }
  return out;
}

/** The bank charges the journal booked as bank fees: how many, and their sum per currency (minor units). */
export async function bookedCharges(sql: Sql): Promise<{ count: number; byCurrency: Record<string, string> }> {
  const rows = await sql<{ currency: string; n: number; total: string }[]>`
    select currency, count(*)::int as n, sum(amount)::text as total from recon.journal_lines
    where account = 'bank_fees' and component = 'bank_charge' group by currency order by currency`;
  return {
    count: rows.reduce((n, r) => n + r.n, 0),
    byCurrency: Object.fromEntries(rows.map((r) => [r.currency, r.total])),
  };
}

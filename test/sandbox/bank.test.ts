import { describe, expect, it } from 'vitest';
import { bankConfigFrom, bankConfigSchema } from '../../src/config/bank';
import { BankEntryBooked, BankStatementImported, bankAccountStream } from '../../src/events/bank-events';
import { newEvent } from '../../src/events/catalog';
import { bankWorld, type BankWorldOptions, type BankWorldStatement, type ExpectedPayout } from '../../src/sandbox/bank';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, NewEvent } from '../../src/store/types';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';
import { projectCash } from '../settlement/support';
import { createTestDatabase } from '../support/db';

const scenario = scenarioFor({ seed: 'bank-world', payments: 300, month: '2025-03', timezone: 'UTC', subMerchants: 5 });
const currencies = ['EUR', 'UAH', 'USD', 'XTS'];
const accounts = Object.fromEntries(
  currencies.map((c, i) => [c, { settlement: `DE8937040044053201300${i}`, payouts: `DE8937040044053201310${i}` }]),
);
const payouts: ExpectedPayout[] = scenario.subMerchants.slice(0, 5).map((s, i) => ({
  reference: `ST-2025-03-${String(i + 1).padStart(4, '0')}`,
  subMerchantId: s.id,
  payeeAccount: `UA21322313000002600723356600${i}`,
  payeeName: s.name,
  currency: 'UAH',
  amount: 100_000n + BigInt(i) * 1_234n,
  issuedOn: '2025-04-01',
}));
const options: BankWorldOptions = {
  accounts,
  lagBusinessDays: 1,
  holidays: ['2025-03-10'],
  tolerance: { EUR: 50n, UAH: 200n, USD: 50n, XTS: 50n },
  payouts,
};

const foots = (s: BankWorldStatement) =>
  s.entries.reduce((b, e) => b + (e.direction === 'credit' ? e.amount : -e.amount), s.openingBalance) ===
  s.closingBalance;

describe('the sandbox bank world', () => {
  const world = bankWorld(scenario, options);

  it('is a pure function of the scenario and options, with the faults asked for and their ground truth', () => {
    expect(bankWorld(scenario, options)).toEqual(world);
    expect(world.statements.every(foots)).toBe(true);
    expect(world.faultyStatements.every((s) => !foots(s))).toBe(true);
    // each account's statements chain: one's closing is the next one's opening
    for (const a of new Set(world.statements.map((s) => s.account))) {
      const list = world.statements.filter((s) => s.account === a);
      for (let i = 1; i < list.length; i++) expect(list[i]!.openingBalance).toBe(list[i - 1]!.closingBalance);
    }
    expect(world.truth.map((t) => t.type).sort()).toEqual([
      'payout_duplicate',
      'payout_missing',
      'payout_returned',
      'settlement_late',
      'settlement_short',
      'statement_unbalanced',
    ]);
    const debits = world.statements
      .flatMap((s) => s.entries)
      .filter((e) => e.direction === 'debit' && !e.transactionCode);
    // five payouts: one missing, one paid twice
    expect(debits).toHaveLength(5);
    // the bank's own charges: a commission per payment run and the maintenance of the payouts account, and
    // the charges of each settlement account, each a line of its own
    expect(world.accountCharges.map((c) => c.transactionCode).sort()).toEqual([
      '805',
      '805',
      '805',
      '805',
      'ACMT/MDOP/CHRG',
      ...Array.from({ length: world.accountCharges.length - 5 }, () => 'PMNT/ICDT/CHRG'),
    ]);
    expect(world.statements.flatMap((s) => s.entries).filter((e) => e.transactionCode)).toHaveLength(
      world.accountCharges.length,
    );
    expect(world.statements.flatMap((s) => s.entries).filter((e) => e.isReturn)).toHaveLength(1);
    expect(world.bankCharges).toHaveLength(1);
    // one payout's debit holds the bank's charge, stated: booked on its own, not in the payment run
    const folded = world.statements.flatMap((s) => s.entries).filter((e) => e.foldedCharge !== undefined);
    expect(folded.map((e) => [e.foldedCharge, e.batchRef])).toEqual([[150n, null]]);
    const payout = payouts.find((p) => p.reference === folded[0]!.remittance)!;
    expect(folded[0]!.amount).toBe(payout.amount + 150n);
    expect(world.foldedCharges).toEqual([
      {
        account: accounts['UAH']!.payouts,
        currency: 'UAH',
        bookingDate: folded[0]!.bookingDate,
        amount: 150n,
        reference: payout.reference,
      },
    ]);
  });

  it("recon's settlement projection finds exactly the world's settlement ground truth", async () => {
    const db = await createTestDatabase();
    try {
      const store = createPostgresEventStore(db.sql);
      for (const c of appendChunks(scenarioEvents(scenario), 500)) await store.appendMany(c);
      // a stand-in for the bank statement import (src/ingest/bank/): the world's statements as its events
      for (const s of world.statements) await store.append(...statementEvents(s));
      const bank = bankConfigFrom(
        bankConfigSchema.parse({
          accounts: currencies.flatMap((c) => [
            { id: accounts[c]!.settlement, currency: c, role: 'settlement' },
            { id: accounts[c]!.payouts, currency: c, role: 'payouts' },
          ]),
          settlement: {
            lagBusinessDays: 1,
            holidays: options.holidays,
            tolerance: Object.fromEntries(Object.entries(options.tolerance!).map(([c, v]) => [c, v.toString()])),
            lateBusinessDays: 3,
          },
        }),
      );
      await projectCash(db.sql, store, 1000, bank);
      const found = await db.sql<{ type: string; currency: string; values: Record<string, unknown> }[]>`
        select type, currency, "values" from recon.settlement_discrepancies where status = 'open' order by type`;
      const truth = world.truth.flatMap((t) =>
        t.type === 'settlement_short'
          ? [[t.type, t.currency, [t.dueOn]]]
          : t.type === 'settlement_late'
            ? [[t.type, t.currency, t.dueOn]]
            : [],
      );
      expect(found.map((f) => [f.type, f.currency, f.values['due_on']])).toEqual(
        truth.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
      const [fees] = await db.sql<{ total: string }[]>`
        select coalesce(sum(amount), 0)::text as total from recon.journal_lines where account = 'bank_fees'`;
      // what the tolerance absorbed, the bank's own charges and the one folded into a payout, all bank fees
      expect(BigInt(fees!.total)).toBe(
        world.bankCharges.reduce((s, c) => s + c.charge, 0n) +
          world.accountCharges.reduce((s, c) => s + c.amount, 0n) +
          world.foldedCharges.reduce((s, c) => s + c.amount, 0n),
      );
      const expected = await db.sql<{ currency: string; due_on: string; amount: string }[]>`
        select currency, due_on, amount::text from recon.settlements_expected order by currency, due_on`;
      expect(expected.map((e) => [e.currency, e.due_on, BigInt(e.amount)])).toEqual(
        world.settlements.map((s) => [s.currency, s.dueOn, s.amount]),
      );
    } finally {
      await db.drop();
    }
  });
});

/** The events an import of one statement appends (entry ids from account and entry, as the import does). */
function statementEvents(s: BankWorldStatement): [string, NewEvent[]] {
  const details = new Map<string, number>();
  const entries = s.entries.map((e) => {
    const detail = e.batchRef ? (details.get(e.batchRef) ?? 0) : 0;
    if (e.batchRef) details.set(e.batchRef, detail + 1);
    return newEvent(
      BankEntryBooked,
      {
        accountId: s.account,
        currency: s.currency,
        direction: e.direction,
        amount: e.amount.toString(),
        bookingDate: e.bookingDate,
        valueDate: e.valueDate,
        bankRef: e.bankRef,
        batchRef: e.batchRef,
        detail,
        endToEndId: e.endToEndId,
        remittance: e.remittance,
        counterpartyName: e.counterpartyName,
        counterpartyAccount: e.counterpartyAccount,
        isReturn: e.isReturn,
        transactionCode: e.transactionCode ?? null,
        statementId: s.statementId,
        // a charge folded into the debit, stated as the camt states it (TxAmt and Chrgs)
        ...(e.foldedCharge === undefined
          ? {}
          : {
              transactionAmount: (e.amount - e.foldedCharge).toString(),
              charges: [
                { amount: e.foldedCharge.toString(), currency: s.currency, direction: 'debit', included: true },
              ],
            }),
      },
      { idContent: [s.account, e.bankRef, detail] },
    );
  });
  const statement = newEvent(BankStatementImported, {
    accountId: s.account,
    currency: s.currency,
    statementId: s.statementId,
    format: 'camt.053',
    openingDate: s.openingDate,
    closingDate: s.closingDate,
    openingBalance: s.openingBalance.toString(),
    closingBalance: s.closingBalance.toString(),
    entries: s.entries.length,
    fileSha256: 'a'.repeat(64),
  });
  const request: AppendRequest = { stream: bankAccountStream(s.account), events: [...entries, statement] };
  return [request.stream, request.events as NewEvent[]];
}

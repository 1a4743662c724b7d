import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bankConfigFrom, bankConfigSchema } from '../../src/config/bank';
import { bankAccountStream, BankEntryBooked } from '../../src/events/bank-events';
import { paidOutAt } from '../../src/export/payouts/paid-out';
import { entryEvents, occurrenceCounter } from '../../src/ingest/bank/entry-events';
import { importBankFiles } from '../../src/ingest/bank/import';
import { knownEventsOf } from '../../src/ingest/bank/known-events';
import type { ParsedEntry } from '../../src/ingest/bank/types';
import { silentLogger } from '../../src/log';
import { rebuildProjection, runProjections } from '../../src/projector/runner';
import { renderCamt053, type BankFileEntry } from '../../src/sandbox/bank-files';
import { projection as bankProjection } from '../../projections/bank';
import { projection as journal } from '../../projections/journal';
import { projection as payoutsProjection } from '../../projections/payouts';
import { projection as settlement } from '../../projections/settlement';
import { useTestStore } from '../support/db';
import { appendAll, issued, payee } from './support';

/**
 * A charge the bank folds into a payout's debit (docs/bank.md, "A charge folded into a transfer"): a camt.053
 * entry of `Amt` = `TxAmt` + `Chrgs`, one transaction detail. The payout reads as paid in full at `TxAmt`, the
 * charge is a bank fee (never the sub-merchant's), and a file imported twice changes nothing. A charge in another
 * currency, or charges that do not add up, leave the line whole: the mismatch stays for a person.
 */

const PAYOUTS = 'DE89370400440532013000';
const SETTLEMENT = 'DE44500105175407324931';
const bank = bankConfigFrom(
  bankConfigSchema.parse({
    accounts: [
      { id: PAYOUTS, currency: 'EUR', role: 'payouts' },
      { id: SETTLEMENT, currency: 'EUR', role: 'settlement' },
    ],
  }),
);
const fx = useTestStore();
const dir = mkdtempSync(path.join(tmpdir(), 'recon-folded-charge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const f = path.join(dir, name);
  writeFileSync(f, text);
  return f;
};
const deps = () => ({
  sql: fx.db.sql,
  store: fx.store,
  log: silentLogger,
  timezone: 'UTC',
  graceHours: 48,
  bank,
  projections: [bankProjection, journal, payoutsProjection, settlement],
});

async function project() {
  for (let i = 0; i < 100; i++) {
    const r = await runProjections(deps());
    if (r.projections.every((p) => p.position === r.head)) return;
  }
}

/** A debit of `transfer` + the charges, paying `reference`, its charges stated as given. */
function payout(
  bankRef: string,
  reference: string,
  transfer: bigint,
  charges: { amount: bigint; currency?: string; included?: boolean }[],
  amount = transfer + charges.reduce((t, c) => t + c.amount, 0n),
): BankFileEntry {
  return {
    direction: 'debit',
    amount,
    bookingDate: '2024-11-04',
    bankRef,
    details: [{ amount: transfer, remittance: reference, counterpartyName: 'Shop', charges }],
  };
}

const statement = (entries: BankFileEntry[], id = 'PAY-2024-11-04') =>
  renderCamt053({
    accountId: PAYOUTS,
    currency: 'EUR',
    statementId: id,
    openingDate: '2024-11-04',
    closingDate: '2024-11-04',
    openingBalance: 10_000_00n,
    entries,
  });

/** Everything the payouts leg and the journal say of the bank's lines, for comparisons. */
async function readModels() {
  const sql = fx.db.sql;
  return {
    payouts: await sql`select reference, status, amount, paid_out from recon.payouts order by reference`,
    lines: await sql`select event_id, amount, role, reference from recon.payout_lines order by event_id`,
    discrepancies: await sql`select id, type, operation_key, status from recon.payout_discrepancies order by id`,
    journal: await sql`select entry_id, account, receiver_name, component, amount from recon.journal_lines
      order by entry_id, line_no`,
  };
}

describe('a bank charge folded into a payout debit (camt.053 TxAmt + Chrgs = Amt)', () => {
  it('pays the payout in full, books the charge as a bank fee, and leaves the mismatches it cannot prove', async () => {
    await appendAll(fx.store, [
      payee('SM1', 'Shop One'),
      payee('SM2', 'Shop Two'),
      payee('SM3', 'Shop Three'),
      payee('SM4', 'Shop Four'),
      issued('2024-10', '2024-11-01T08:00:00Z', [
        { subMerchantId: 'SM1', reference: 'RS-SM1-2024-10-EUR', payable: 100_00n },
        { subMerchantId: 'SM2', reference: 'RS-SM2-2024-10-EUR', payable: 250_00n },
        { subMerchantId: 'SM3', reference: 'RS-SM3-2024-10-EUR', payable: 80_00n },
        { subMerchantId: 'SM4', reference: 'RS-SM4-2024-10-EUR', payable: 60_00n },
      ]),
    ]);
    const text = statement([
      // folded: 100.00 + 1.50 included = 101.50
      payout('T1', 'RS-SM1-2024-10-EUR', 100_00n, [{ amount: 1_50n, included: true }]),
      // the charge in another currency: not split
      payout('T2', 'RS-SM2-2024-10-EUR', 250_00n, [{ amount: 1_50n, currency: 'USD', included: true }]),
      // says included, but 80.00 + 0.50 is not the 81.00 debited: not split
      payout('T3', 'RS-SM3-2024-10-EUR', 80_00n, [{ amount: 50n, included: true }], 81_00n),
      // a charge not included in the debit (billed elsewhere): the debit is the transfer, nothing to split
      payout('T4', 'RS-SM4-2024-10-EUR', 60_00n, [{ amount: 2_00n, included: false }], 60_00n),
    ]);
    const known = knownEventsOf(fx.store, fx.db.sql);
    const [first] = await importBankFiles(fx.store, known, [file('payouts.xml', text)], { accounts: bank.accounts });
    expect(first).toMatchObject({ statements: 1, entries: 4, entriesKnown: 0 });
    await project();

    const m = await readModels();
    expect(m.payouts.map((p) => [p.reference, p.status, p.paid_out])).toEqual([
      ['RS-SM1-2024-10-EUR', 'paid', 100_00n],
      ['RS-SM2-2024-10-EUR', 'paid', 251_50n],
      ['RS-SM3-2024-10-EUR', 'paid', 81_00n],
      ['RS-SM4-2024-10-EUR', 'paid', 60_00n],
    ]);
    // only the lines whose charge could not be proved stay a mismatch, for a person
    const mismatches = await fx.db.sql<{ operation_key: string }[]>`
      select operation_key from recon.payout_discrepancies where type = 'payout_amount_mismatch' order by 1`;
    expect(mismatches.map((d) => d.operation_key)).toEqual(['RS-SM2-2024-10-EUR', 'RS-SM3-2024-10-EUR']);
    expect(await fx.db.sql`select type from recon.payout_discrepancies where type <> 'payout_amount_mismatch'`).toEqual(
      [],
    );

    // the journal: the sub-merchant's payable moves by the transfer alone; the charge is a bank fee
    const [t1] = await fx.db.sql<{ event_id: string }[]>`
      select event_id from recon.bank_entries where bank_ref = 'T1'`;
    const t1Lines = await fx.db.sql<{ kind: string; account: string; receiver_name: string | null; amount: string }[]>`
      select e.kind, l.account, l.receiver_name, l.amount::text from recon.journal_lines l
      join recon.journal_entries e using (entry_id) where e.payment_id = ${t1!.event_id}
      order by e.kind, l.line_no`;
    expect(t1Lines.map((l) => [l.kind, l.account, l.receiver_name, l.amount])).toEqual([
      ['bank_charge', 'bank_fees', null, '150'],
      ['bank_charge', `bank:${PAYOUTS}`, null, '-150'],
      ['payout', 'payable', 'Shop One', '10000'],
      ['payout', `bank:${PAYOUTS}`, 'Shop One', '-10000'],
    ]);
    const payable = await fx.db.sql<{ receiver_name: string; amount: string }[]>`
      select receiver_name, sum(amount)::text as amount from recon.settlement_ledger group by 1 order by 1`;
    expect(payable.map((p) => [p.receiver_name, p.amount])).toEqual([
      ['Shop Four', '-6000'],
      ['Shop One', '-10000'],
      ['Shop Three', '-8100'],
      ['Shop Two', '-25150'],
    ]);
    const fees = await fx.db.sql<{ amount: string }[]>`
      select coalesce(sum(amount), 0)::text as amount from recon.journal_lines where account = 'bank_fees'`;
    expect(fees[0]!.amount).toBe('150');
    // the bank account comes down by every debit in full, and the journal balances
    const [account] = await fx.db.sql<{ amount: string }[]>`
      select sum(amount)::text as amount from recon.journal_lines where account = ${`bank:${PAYOUTS}`}`;
    expect(account!.amount).toBe((-(101_50n + 251_50n + 81_00n + 60_00n)).toString());
    const [trial] = await fx.db.sql<{ total: string }[]>`select sum(amount)::text as total from recon.journal_lines`;
    expect(trial!.total).toBe('0');

    // what the next statement deducts as paid out: the transfer, not the bank's charge
    const head = (await fx.store.headPosition())!;
    const paid = await paidOutAt(fx.db.sql, head, 10);
    expect(paid?.find((p) => p.reference === 'RS-SM1-2024-10-EUR')?.amount).toBe(100_00n);

    // the same file again: nothing new, nothing changed
    const [again] = await importBankFiles(fx.store, known, [file('payouts-again.xml', text)], {
      accounts: bank.accounts,
    });
    expect(again).toMatchObject({ statements: 0, statementsKnown: 1, entries: 0, entriesKnown: 4 });
    expect(await fx.store.headPosition()).toEqual(head);
    await project();
    expect(await readModels()).toEqual(m);
  });

  it('a rebuild from zero, one event a batch, gives the same read models', async () => {
    const before = await readModels();
    for (const name of ['journal', 'payouts']) await rebuildProjection(deps(), name, { batchSize: 1 });
    await project();
    expect(await readModels()).toEqual(before);
  });

  it("reads an MT940's SWIFT codes (/OCMT/ + /CHGS/) the same way", async () => {
    await appendAll(fx.store, [
      payee('SM5', 'Shop Five'),
      issued(
        '2024-10',
        '2024-11-03T08:00:00Z',
        [{ subMerchantId: 'SM5', reference: 'RS-SM5-2024-10-EUR', payable: 70_00n }],
        {
          subMerchantId: 'SM5',
        },
      ),
    ]);
    const sta = [
      ':20:STMT',
      `:25:${PAYOUTS}`,
      ':28C:7/1',
      ':60F:C241106EUR500,00',
      ':61:2411061106D72,00NTRFNONREF//M1',
      '/OCMT/EUR70,00//CHGS/EUR2,00/',
      ':86:/REMI/RS-SM5-2024-10-EUR/NAME/Shop Five',
      ':62F:C241106EUR428,00',
      '-',
    ].join('\r\n');
    const known = knownEventsOf(fx.store, fx.db.sql);
    await importBankFiles(fx.store, known, [file('payouts.sta', sta)], { accounts: bank.accounts });
    await project();
    const [p] = await fx.db.sql`select status, paid_out from recon.payouts where reference = 'RS-SM5-2024-10-EUR'`;
    expect(p).toEqual({ status: 'paid', paid_out: 70_00n });
    expect(
      await fx.db.sql`select type from recon.payout_discrepancies where operation_key = 'RS-SM5-2024-10-EUR'`,
    ).toEqual([]);
    const fees = await fx.db.sql<{ amount: string }[]>`
      select l.amount::text from recon.journal_lines l join recon.journal_entries e using (entry_id)
      join recon.bank_entries b on b.event_id::text = e.payment_id where b.bank_ref = 'M1' and l.account = 'bank_fees'`;
    expect(fees.map((f) => f.amount)).toEqual(['200']);
  });

  it('an entry stored before charges were read stays as it was booked when its file comes again', async () => {
    // the entry as an import before this change stored it: same id, no TxAmt, no charges
    const entry: BankFileEntry = payout('T9', 'RS-SM9-2024-10-EUR', 40_00n, [{ amount: 1_00n, included: true }]);
    const parsed: ParsedEntry = {
      amount: entry.amount,
      direction: 'debit',
      currency: 'EUR',
      status: 'booked',
      bookingDate: '2024-11-05',
      valueDate: '2024-11-05',
      bankRef: 'T9',
      isReversal: false,
      transactionCode: 'PMNT/ICDT/ESCT',
      details: [
        {
          amount: 40_00n,
          direction: null,
          endToEndId: null,
          remittance: 'RS-SM9-2024-10-EUR',
          counterpartyName: 'Shop',
          counterpartyAccount: null,
          isReturn: false,
          transactionCode: null,
          bankRef: null,
        },
      ],
      info: null,
      where: '',
    };
    const old = entryEvents(PAYOUTS, { statementId: 'OLD', currency: 'EUR' }, parsed, occurrenceCounter(true));
    expect(Object.keys(old[0]!.data as object)).not.toContain('charges');
    await fx.store.append(bankAccountStream(PAYOUTS), old);
    await appendAll(fx.store, [
      payee('SM9', 'Shop Nine'),
      issued(
        '2024-10',
        '2024-11-02T08:00:00Z',
        [{ subMerchantId: 'SM9', reference: 'RS-SM9-2024-10-EUR', payable: 40_00n }],
        {
          subMerchantId: 'SM9',
        },
      ),
    ]);
    const text = renderCamt053({
      accountId: PAYOUTS,
      currency: 'EUR',
      statementId: 'PAY-2024-11-05',
      openingDate: '2024-11-05',
      closingDate: '2024-11-05',
      openingBalance: 0n,
      entries: [{ ...entry, bookingDate: '2024-11-05', valueDate: '2024-11-05' }],
    });
    const known = knownEventsOf(fx.store, fx.db.sql);
    const [outcome] = await importBankFiles(fx.store, known, [file('old.xml', text)], { accounts: bank.accounts });
    // the entry is known (its id): left out, the stored data kept; only the statement is new
    expect(outcome).toMatchObject({ statements: 1, entries: 0, entriesKnown: 1 });
    const stored = (await fx.store.readStream(bankAccountStream(PAYOUTS))).filter((e) => e.id === old[0]!.id);
    expect(stored).toHaveLength(1);
    expect(BankEntryBooked.schema.parse(stored[0]!.data)).not.toHaveProperty('charges');
    await project();
    // so it reads as it did before: the whole debit paid, the mismatch left for a person
    const [p] = await fx.db.sql`select status, paid_out from recon.payouts where reference = 'RS-SM9-2024-10-EUR'`;
    expect(p).toEqual({ status: 'paid', paid_out: 41_00n });
    const d = await fx.db.sql`select type from recon.payout_discrepancies where operation_key = 'RS-SM9-2024-10-EUR'`;
    expect(d).toEqual([{ type: 'payout_amount_mismatch' }]);
  });
});

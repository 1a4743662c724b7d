import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bankConfigFrom, bankConfigSchema, DEFAULT_BANK_CHARGES } from '../../src/config/bank';
import { importBankFiles } from '../../src/ingest/bank/import';
import { csvMappingSchema } from '../../src/ingest/bank/csv';
import { knownEventsOf } from '../../src/ingest/bank/known-events';
import { silentLogger } from '../../src/log';
import { rebuildProjection, runProjections } from '../../src/projector/runner';
import { isBankCharge } from '../../src/reconciliation/bank-charges';
import { renderCamt053 } from '../../src/sandbox/bank-files';
import { projection as bankProjection } from '../../projections/bank';
import { projection as journal } from '../../projections/journal';
import { projection as payoutsProjection } from '../../projections/payouts';
import { projection as settlement } from '../../projections/settlement';
import { useTestStore } from '../support/db';
import { appendAll, issued, payee } from './support';

/**
 * The bank's own charges on a payouts or settlement account are bank fees (issue 25): recognised by the
 * transaction code each format gives (camt.053 BkTxCd sub-family CHRG..., MT940 :61: NCHG, the German :86:
 * GVC, a CSV column through the mapping), booked in the journal against `bank_fees`, and never judged as a
 * payout (payout_unexpected) or a settlement (settlement_unexpected).
 */

describe('which transaction codes are charges', () => {
  it('reads each format by default, and nothing else', () => {
    for (const code of ['ACMT/MDOP/CHRG', 'PMNT/ICDT/CHRG', 'PMNT/RCDT/CHRG', 'PMNT/CCRD/COMM', 'ACMT/MDOP/FEES'])
      expect([code, isBankCharge(code)]).toEqual([code, true]);
    for (const code of ['NCHG', 'NCOM', '805', '808', ' 809 '])
      expect([code, isBankCharge(code)]).toEqual([code, true]);
    for (const code of [
      'PMNT/ICDT/ESCT',
      'PMNT/RCDT/ESCT',
      'PMNT/ICDT/RRTN',
      'NTRF',
      'N062',
      '166',
      '177',
      '159',
      null,
      '',
    ])
      expect([code, isBankCharge(code)]).toEqual([code, false]);
  });

  it('takes the codes of a bank that writes them otherwise from the configuration', () => {
    const rules = bankConfigFrom(
      bankConfigSchema.parse({
        charges: { camtSubFamilies: ['chrg'], mt940Types: ['NMSC'], gvc: ['808'], codes: ['Entgelt', 'BANK/FEE'] },
      }),
    ).charges;
    expect(['ACMT/MDOP/CHRG', 'NMSC', '808', 'entgelt', 'BANK/FEE'].map((c) => isBankCharge(c, rules))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['ACMT/MDOP/COMM', 'NCHG', '805', 'Entgelte'].map((c) => isBankCharge(c, rules))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(bankConfigFrom(bankConfigSchema.parse({})).charges).toEqual(DEFAULT_BANK_CHARGES);
    expect(bankConfigSchema.safeParse({ charges: { gvc: ['8050'] } }).success).toBe(false);
  });
});

const PAYOUTS = 'DE89370400440532013000';
const PAYOUTS_CSV = 'DE02120300000000202051';
const SETTLEMENT = 'DE44500105175407324931';
const bank = bankConfigFrom(
  bankConfigSchema.parse({
    accounts: [
      { id: PAYOUTS, currency: 'EUR', role: 'payouts' },
      { id: PAYOUTS_CSV, currency: 'EUR', role: 'payouts' },
      { id: SETTLEMENT, currency: 'EUR', role: 'settlement' },
    ],
    // the CSV bank writes its charges as the booking text "Entgelt"
    charges: { codes: ['Entgelt'] },
  }),
);

const fx = useTestStore();
const dir = mkdtempSync(path.join(tmpdir(), 'recon-bank-charges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const f = path.join(dir, name);
  writeFileSync(f, text);
  return f;
};

/** camt.053 of the payouts account: a payout, a commission for it, the account's maintenance. */
const camt = renderCamt053({
  accountId: PAYOUTS,
  currency: 'EUR',
  statementId: 'PAY-2024-11-04',
  openingDate: '2024-11-04',
  closingDate: '2024-11-04',
  openingBalance: 1000_00n,
  entries: [
    {
      direction: 'debit',
      amount: 100_00n,
      bookingDate: '2024-11-04',
      bankRef: 'T1',
      details: [{ amount: 100_00n, remittance: 'RS-SM1-2024-10-EUR', counterpartyName: 'Shop One' }],
    },
    {
      direction: 'debit',
      amount: 75n,
      bookingDate: '2024-11-04',
      bankRef: 'C1',
      transactionCode: 'PMNT/ICDT/CHRG',
      details: [{ amount: 75n, remittance: 'COMMISSION 1 TRANSFER' }],
    },
    {
      direction: 'debit',
      amount: 5_00n,
      bookingDate: '2024-11-04',
      bankRef: 'C2',
      transactionCode: 'ACMT/MDOP/CHRG',
      details: [{ amount: 5_00n, remittance: 'ACCOUNT MAINTENANCE' }],
    },
  ],
});

/** MT940 of the settlement account: a German :86: with GVC 805 and a SWIFT :61: NCHG with a free-text :86:. */
const mt940 = [
  ':20:STARTUMSE',
  `:25:${SETTLEMENT}`,
  ':28C:00001/001',
  ':60F:C241104EUR500,00',
  ':61:2411040411DR3,00NCHGNONREF//G805',
  ':86:805?00ABSCHLUSS?20Entgelte Kontofuehrung',
  ':61:2411040411DR2,50NCHGNONREF//SW01',
  ':86:CHARGES FOR INCOMING PAYMENTS',
  ':61:2411040411CR1,00NCHGNONREF//SW02',
  ':86:REFUND OF CHARGES',
  ':62F:C241104EUR495,50',
  '-',
].join('\r\n');

const csv = [
  'Buchungstag;Betrag;Saldo;Verwendungszweck;Buchungstext',
  '05.11.2024;-4,00;996,00;Kontofuehrung November;Entgelt',
  '05.11.2024;-250,00;746,00;RS-SM2-2024-10-EUR;Ueberweisung',
].join('\n');
const mapping = csvMappingSchema.parse({
  account: PAYOUTS_CSV,
  currency: 'EUR',
  delimiter: ';',
  decimal: ',',
  dateFormat: 'dd.MM.yyyy',
  columns: {
    bookingDate: 'Buchungstag',
    amount: 'Betrag',
    balance: 'Saldo',
    remittance: 'Verwendungszweck',
    transactionCode: 'Buchungstext',
  },
});

async function project() {
  for (let i = 0; i < 100; i++) {
    const r = await runProjections({
      sql: fx.db.sql,
      store: fx.store,
      log: silentLogger,
      timezone: 'UTC',
      graceHours: 48,
      bank,
      projections: [bankProjection, journal, payoutsProjection, settlement],
    });
    if (r.projections.every((p) => p.position === r.head)) return;
  }
}

describe('charges on payouts and settlement accounts, imported from camt.053, MT940 and CSV', () => {
  it('books them as bank fees and judges none of them as a payout or a settlement', async () => {
    await appendAll(fx.store, [
      payee('SM1', 'Shop One'),
      payee('SM2', 'Shop Two'),
      issued('2024-10', '2024-11-01T08:00:00Z', [
        { subMerchantId: 'SM1', reference: 'RS-SM1-2024-10-EUR', payable: 100_00n },
        { subMerchantId: 'SM2', reference: 'RS-SM2-2024-10-EUR', payable: 250_00n },
      ]),
    ]);
    const known = knownEventsOf(fx.store, fx.db.sql);
    await importBankFiles(fx.store, known, [file('payouts.xml', camt), file('settlement.sta', mt940)], {
      accounts: bank.accounts,
    });
    await importBankFiles(fx.store, known, [file('payouts.csv', csv)], { accounts: bank.accounts, mapping });
    await project();

    const codes = await fx.db.sql<{ account_id: string; transaction_code: string | null; amount: string }[]>`
      select account_id, transaction_code, amount::text from recon.bank_entries order by account_id, amount::int8`;
    // what each reader carried onto the entry
    expect(codes.map((c) => [c.account_id, c.transaction_code, c.amount])).toEqual([
      [PAYOUTS_CSV, 'Entgelt', '400'],
      [PAYOUTS_CSV, 'Ueberweisung', '25000'],
      [SETTLEMENT, 'NCHG', '100'],
      [SETTLEMENT, 'NCHG', '250'],
      [SETTLEMENT, '805', '300'],
      [PAYOUTS, 'PMNT/ICDT/CHRG', '75'],
      [PAYOUTS, 'ACMT/MDOP/CHRG', '500'],
      [PAYOUTS, 'PMNT/ICDT/ESCT', '10000'],
    ]);

    // no payout and no settlement discrepancy from a charge; both payouts paid
    const payoutDisc = await fx.db.sql`select type from recon.payout_discrepancies`;
    expect(payoutDisc).toEqual([]);
    const settlementDisc = await fx.db.sql`select type from recon.settlement_discrepancies`;
    expect(settlementDisc).toEqual([]);
    const statuses = await fx.db.sql<{ reference: string; status: string }[]>`
      select reference, status from recon.payouts order by reference`;
    expect(statuses.map((s) => [s.reference, s.status])).toEqual([
      ['RS-SM1-2024-10-EUR', 'paid'],
      ['RS-SM2-2024-10-EUR', 'paid'],
    ]);
    const lines = await fx.db.sql<
      { amount: string }[]
    >`select amount::text from recon.payout_lines order by amount::int8`;
    expect(lines.map((l) => l.amount)).toEqual(['10000', '25000']);

    // the journal: bank_fees up by each charge (down by the refund), the accounts down by the same
    const fees = await fx.db.sql<{ account: string; amount: string; n: number }[]>`
      select account, sum(amount)::text as amount, count(*)::int as n from recon.journal_lines
      where component = 'bank_charge' group by account order by account`;
    expect(fees.map((f) => [f.account, f.amount, f.n])).toEqual([
      [`bank:${PAYOUTS_CSV}`, '-400', 1],
      [`bank:${SETTLEMENT}`, '-450', 3],
      [`bank:${PAYOUTS}`, '-575', 2],
      ['bank_fees', '1425', 6],
    ]);
    const [kinds] = await fx.db.sql<{ n: number }[]>`
      select count(*)::int as n from recon.journal_entries where kind = 'bank_charge' and receiver_name is null`;
    expect(kinds!.n).toBe(6);
    // and the journal still balances
    const [trial] = await fx.db.sql<
      { total: string }[]
    >`select coalesce(sum(amount), 0)::text as total from recon.journal_lines`;
    expect(trial!.total).toBe('0');
  });

  it('a rebuild from zero books the same charges', async () => {
    const before = await fx.db.sql`select entry_id, account, amount from recon.journal_lines
      where component = 'bank_charge' order by entry_id, line_no`;
    await rebuildProjection(
      {
        sql: fx.db.sql,
        store: fx.store,
        log: silentLogger,
        timezone: 'UTC',
        graceHours: 48,
        bank,
        projections: [bankProjection, journal, payoutsProjection, settlement],
      },
      'journal',
      { batchSize: 1 },
    );
    await project();
    const after = await fx.db.sql`select entry_id, account, amount from recon.journal_lines
      where component = 'bank_charge' order by entry_id, line_no`;
    expect(after).toEqual(before);
    expect(after).toHaveLength(12);
  });
});

import { createReadStream, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCamt053 } from '../../../src/ingest/bank/camt053';
import { csvMappingSchema, parseCsv } from '../../../src/ingest/bank/csv';
import { detectFormat } from '../../../src/ingest/bank/detect';
import { parseMt940 } from '../../../src/ingest/bank/mt940';
import { closingBalance, renderCamt053, renderMt940, type BankFileStatement } from '../../../src/sandbox/bank-files';
import { camtText, collect, fixture, mt940Text } from './support';

describe('camt.053', () => {
  it('reads the .001.02 example: balances, a batch entry with one detail per payment, a single debit', async () => {
    const file = fixture('camt053-v02-batch.xml');
    const { statements, entries } = await collect(parseCamt053(createReadStream(file), file));
    expect(statements).toHaveLength(1);
    const s = statements[0]!;
    expect(s).toMatchObject({
      statementId: 'AAAASESS-FP-STAT001-0131',
      account: 'SE5230000000000312345678',
      currency: 'SEK',
      opening: { amount: 1_000_000n, date: '2025-01-31' },
      closing: { amount: 1_025_000n, date: '2025-01-31' },
    });
    expect(entries).toHaveLength(2);
    const [batch, debit] = entries;
    expect(batch).toMatchObject({
      amount: 30_000n,
      direction: 'credit',
      status: 'booked',
      bookingDate: '2025-01-31',
      bankRef: 'AAAASESS-FP-ACCR001',
      transactionCode: 'PMNT/RCDT/ESCT',
    });
    expect(batch!.details.map((d) => [d.amount, d.endToEndId, d.remittance, d.counterpartyName])).toEqual([
      [10_000n, 'E2E-PSP-0001', 'SETTLEMENT 2025-01-30 BATCH 1', 'Payment Services Provider AB'],
      [20_000n, 'E2E-PSP-0002', 'RF18539007547034', 'Payment Services Provider AB'],
    ]);
    expect(batch!.details[0]!.counterpartyAccount).toBe('SE3550000000054910000003');
    expect(debit).toMatchObject({ amount: 5_000n, direction: 'debit', transactionCode: '544' });
    expect(debit!.details[0]).toMatchObject({
      endToEndId: null,
      counterpartyName: 'Sub Merchant One',
      counterpartyAccount: '12345678',
      remittance: 'PAYOUT ST-2025-01-0001',
    });
  });

  it('reads .001.08 with a namespace prefix: Sts/Cd, Pty/Nm, DtTm, a pending entry, a return', async () => {
    const file = fixture('camt053-v08-prefixed.xml');
    const { statements, entries } = await collect(parseCamt053(createReadStream(file), file));
    expect(statements[0]).toMatchObject({
      statementId: '2025-02-01-0001',
      account: 'DE89370400440532013000',
      opening: { amount: -100_000n, date: '2025-01-31' },
      closing: { amount: 162_000n, date: '2025-02-01' },
    });
    expect(entries.map((e) => [e.status, e.amount, e.direction, e.bookingDate])).toEqual([
      ['booked', 250_000n, 'credit', '2025-02-01'],
      ['pending', 999n, 'debit', '2025-02-01'],
      ['booked', 12_000n, 'credit', '2025-02-01'],
    ]);
    expect(entries[0]!.details[0]).toMatchObject({ counterpartyName: 'PSP Payments GmbH', isReturn: false });
    expect(entries[2]!.isReversal).toBe(true);
    expect(entries[2]!.details[0]).toMatchObject({ isReturn: true, counterpartyName: 'Closed Shop UG' });
  });
});

describe('MT940', () => {
  it('reads German structured :86: subfields cut across lines (?20–?29, ?30/?31, ?32/?33, GVC)', async () => {
    const file = fixture('mt940-dk-structured.sta');
    const { statements, entries } = await collect(parseMt940(createReadStream(file), file));
    expect(statements).toEqual([
      expect.objectContaining({
        statementId: 'STARTUMSE/00001/001',
        account: '10010010/1234567890',
        currency: 'EUR',
        opening: expect.objectContaining({ amount: 667_054n, date: '2017-04-28' }),
        closing: expect.objectContaining({ amount: 701_456n, date: '2017-05-03' }),
      }),
    ]);
    expect(entries.map((e) => [e.direction, e.amount, e.bookingDate, e.transactionCode])).toEqual([
      ['credit', 22_372n, '2017-05-03', '166'],
      ['debit', 970n, '2017-05-03', '006'],
      ['credit', 13_000n, '2017-05-03', '159'],
    ]);
    expect(entries[0]!.details[0]).toMatchObject({
      endToEndId: 'CCB.122.UE.266455',
      remittance: 'Re 17-H-0005 vom 24.04.2017',
      counterpartyAccount: 'DE89370400440532013000',
      counterpartyName: 'TEST TEST GBR',
    });
    expect(entries[1]!.details[0]).toMatchObject({
      counterpartyAccount: '7109860012',
      counterpartyName: 'BIRKEN-APOTHEKE',
    });
    expect(entries[2]!.details[0]).toMatchObject({
      counterpartyName: 'Debeka Kranken-Versicherung-Verein a.G',
      remittance: 'Retoure Auszahlung',
      isReturn: true,
    });
  });

  it('reads a file in the SWIFT block envelope with coded :86: text and a bank reference', async () => {
    const file = fixture('mt940-swift-envelope.txt');
    expect(detectFormat(file)).toBe('mt940');
    const { statements, entries } = await collect(parseMt940(createReadStream(file), file));
    expect(statements[0]).toMatchObject({ statementId: 'P140220000000001/00000', account: 'NL69INGB0123456789EUR' });
    expect(entries.map((e) => [e.direction, e.amount, e.bankRef])).toEqual([
      ['credit', 156n, '00000000001005'],
      ['debit', 157n, '00000000001006'],
    ]);
    expect(entries[0]!.details[0]!.endToEndId).toBe('EV12341REP1231456T1234');
  });
});

describe('CSV through a mapping', () => {
  it('reads signed amounts with a decimal comma and foots on the running balance', async () => {
    const file = fixture('statement.csv');
    const mapping = csvMappingSchema.parse(JSON.parse(readFileSync(fixture('statement.mapping.json'), 'utf8')));
    expect(detectFormat(file)).toBe('csv');
    const { statements, entries } = await collect(parseCsv(createReadStream(file), file, mapping));
    expect(statements[0]).toMatchObject({
      statementId: 'csv:2025-03-01..2025-03-03',
      account: 'DE89370400440532013000',
      opening: { amount: 1_000_000n },
      closing: { amount: 1_223_456n, date: '2025-03-03' },
    });
    expect(entries.map((e) => [e.direction, e.amount, e.bookingDate])).toEqual([
      ['credit', 123_456n, '2025-03-01'],
      ['debit', 23_456n, '2025-03-01'],
      ['credit', 123_456n, '2025-03-03'],
    ]);
    expect(entries[1]!.details[0]).toMatchObject({
      counterpartyName: 'Sub Merchant One',
      remittance: 'ST-2025-02-0001',
    });
  });
});

describe('the sandbox writers read back as written', () => {
  const statement: BankFileStatement = {
    accountId: 'UA213223130000026007233566001',
    currency: 'UAH',
    statementId: 'SBX-2025-01-31',
    openingDate: '2025-01-31',
    closingDate: '2025-01-31',
    openingBalance: 50_000n,
    entries: [
      {
        direction: 'credit',
        amount: 30_000n,
        bookingDate: '2025-01-31',
        bankRef: 'B1',
        details: [
          { amount: 10_000n, endToEndId: 'E1', remittance: 'settlement 2025-01-30', counterpartyName: 'PSP' },
          { amount: 20_000n, endToEndId: 'E2', remittance: 'settlement 2025-01-30', counterpartyName: 'PSP' },
        ],
      },
      {
        direction: 'debit',
        amount: 7_000n,
        bookingDate: '2025-01-31',
        bankRef: 'B2',
        details: [{ remittance: 'ST-0001', counterpartyName: 'Shop & Co <1>' }],
      },
      { direction: 'debit', amount: 1n, bookingDate: '2025-01-31', pending: true },
    ],
  };
  it('camt.053', async () => {
    const { statements, entries } = await camtText(renderCamt053(statement));
    expect(statements[0]!.closing!.amount).toBe(closingBalance(statement));
    expect(closingBalance(statement)).toBe(73_000n);
    expect(entries.map((e) => [e.status, e.amount, e.details.length])).toEqual([
      ['booked', 30_000n, 2],
      ['booked', 7_000n, 1],
      ['pending', 1n, 0],
    ]);
    expect(entries[1]!.details[0]!.counterpartyName).toBe('Shop & Co <1>');
  });
  it('MT940 with and without the envelope', async () => {
    for (const envelope of [false, true]) {
      const { statements, entries } = await mt940Text(renderMt940(statement, { envelope }));
      expect(statements[0]!.closing!.amount).toBe(73_000n);
      expect(entries.map((e) => [e.direction, e.amount])).toEqual([
        ['credit', 10_000n],
        ['credit', 20_000n],
        ['debit', 7_000n],
      ]);
      expect(entries[2]!.details[0]!.remittance).toBe('ST-0001');
    }
  });
});

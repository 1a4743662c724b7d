import { describe, expect, it } from 'vitest';
import { stableStringify } from '../../../src/canonical';
import { BankEntryBooked } from '../../../src/events/bank-events';
import { entryEvents, occurrenceCounter } from '../../../src/ingest/bank/entry-events';
import { createSpool, type SpoolItem } from '../../../src/ingest/bank/spool';
import type { ParsedEntry } from '../../../src/ingest/bank/types';
import { foldedChargeOf } from '../../../src/reconciliation/bank-charges';
import { renderCamt053 } from '../../../src/sandbox/bank-files';
import { camtText, mt940Text } from './support';

/**
 * The charges a camt.053 states for a transfer (`TxDtls/Chrgs`, `Ntry/Chrgs`; docs/bank.md, "A charge folded
 * into a transfer"): read as written, carried on the entry's event beside the transfer's own amount (`TxAmt`)
 * only when the file states some, never in the entry's id; whether a charge is folded into the debit is the
 * read models' reading (`foldedChargeOf`).
 */

const ACCOUNT = 'DE89370400440532013000';
const NS = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001';

/** A camt.053 of one debit entry whose single detail is `detail` (XML of its TxDtls' inside), `extra` in the Ntry. */
function camt(version: string, amount: string, detail: string, extra = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="${NS}.${version}"><BkToCstmrStmt>
<GrpHdr><MsgId>M</MsgId><CreDtTm>2024-11-04T23:59:59</CreDtTm></GrpHdr>
<Stmt><Id>S1</Id><Acct><Id><IBAN>${ACCOUNT}</IBAN></Id><Ccy>EUR</Ccy></Acct>
<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1000.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2024-11-04</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">${(1000 - Number(amount)).toFixed(2)}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2024-11-04</Dt></Dt></Bal>
<Ntry><Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2024-11-04</Dt></BookgDt>
<AcctSvcrRef>T1</AcctSvcrRef>${extra}
<NtryDtls><TxDtls>${detail}<RmtInf><Ustrd>RS-SM1-2024-10-EUR</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
</Stmt></BkToCstmrStmt></Document>`;
}

const eventOf = (entry: ParsedEntry) =>
  entryEvents(ACCOUNT, { statementId: 'S1', currency: 'EUR' }, entry, occurrenceCounter(true))[0]!;

describe('camt.053 charges of a transfer', () => {
  it('reads .001.08 records (TxAmt, Rcrd with ChrgInclInd) onto the event, beside an id that ignores them', async () => {
    const text = renderCamt053({
      accountId: ACCOUNT,
      currency: 'EUR',
      statementId: 'S1',
      openingDate: '2024-11-04',
      closingDate: '2024-11-04',
      openingBalance: 1000_00n,
      entries: [
        {
          direction: 'debit',
          amount: 101_50n,
          bookingDate: '2024-11-04',
          bankRef: 'T1',
          details: [{ amount: 100_00n, remittance: 'RS-1', charges: [{ amount: 1_50n, included: true }] }],
        },
      ],
    });
    const { entries } = await camtText(text);
    expect(entries[0]!.details[0]!.charges).toEqual([
      { amount: 1_50n, currency: 'EUR', direction: 'debit', included: true },
    ]);
    const e = eventOf(entries[0]!);
    expect(e.data).toMatchObject({
      amount: '10150',
      transactionAmount: '10000',
      charges: [{ amount: '150', currency: 'EUR', direction: 'debit', included: true }],
    });
    expect(BankEntryBooked.schema.parse(e.data)).toEqual(e.data);
    expect(e.canonicalData).toBe(stableStringify(e.data, true));
    expect(foldedChargeOf(BankEntryBooked.schema.parse(e.data))).toBe(1_50n);

    // the same entry without its charges: the same id, and data without the two fields (as stored before them)
    const bare: ParsedEntry = {
      ...entries[0]!,
      details: entries[0]!.details.map(({ charges: _, ...d }) => d),
    };
    const before = eventOf(bare);
    expect(before.id).toBe(e.id);
    expect(Object.keys(before.data as object)).not.toContain('charges');
    expect(Object.keys(before.data as object)).not.toContain('transactionAmount');
    expect(before.canonicalData).toBe(stableStringify(before.data, true));
  });

  it('reads the .001.02 shape (Amt on Chrgs itself), entry-level Chrgs, and a total given alone', async () => {
    const v02 = await camtText(
      camt(
        '02',
        '101.50',
        '<AmtDtls><TxAmt><Amt Ccy="EUR">100.00</Amt></TxAmt></AmtDtls>' +
          '<Chrgs><Amt Ccy="EUR">1.00</Amt><Tp><Cd>COMT</Cd></Tp></Chrgs><Chrgs><Amt Ccy="EUR">0.50</Amt></Chrgs>',
      ),
    );
    expect(v02.entries[0]!.details[0]!.charges).toEqual([
      { amount: 100n, currency: 'EUR', direction: null, included: null },
      { amount: 50n, currency: 'EUR', direction: null, included: null },
    ]);
    expect(foldedChargeOf(BankEntryBooked.schema.parse(eventOf(v02.entries[0]!).data))).toBe(1_50n);

    // charges of the entry (Ntry/Chrgs) stand for its one transfer's when the detail states none
    const entryLevel = await camtText(
      camt(
        '04',
        '101.50',
        '<AmtDtls><TxAmt><Amt Ccy="EUR">100.00</Amt></TxAmt></AmtDtls>',
        '<Chrgs><TtlChrgsAndTaxAmt Ccy="EUR">1.50</TtlChrgsAndTaxAmt></Chrgs>',
      ),
    );
    expect(entryLevel.entries[0]!.charges).toEqual([
      { amount: 1_50n, currency: 'EUR', direction: null, included: null },
    ]);
    expect(eventOf(entryLevel.entries[0]!).data).toMatchObject({ transactionAmount: '10000' });
    expect(foldedChargeOf(BankEntryBooked.schema.parse(eventOf(entryLevel.entries[0]!).data))).toBe(1_50n);
  });

  it('carries no TxAmt given in another currency than the entry: nothing to split by', async () => {
    const { entries } = await camtText(
      camt(
        '08',
        '101.50',
        '<AmtDtls><TxAmt><Amt Ccy="USD">100.00</Amt></TxAmt></AmtDtls>' +
          '<Chrgs><Rcrd><Amt Ccy="EUR">1.50</Amt><ChrgInclInd>true</ChrgInclInd></Rcrd></Chrgs>',
      ),
    );
    const data = BankEntryBooked.schema.parse(eventOf(entries[0]!).data);
    expect(data).toMatchObject({ amount: '10150', transactionAmount: null });
    expect(foldedChargeOf(data)).toBe(0n);
  });

  it('keeps the charges through the spool of the batched import', async () => {
    const { entries } = await camtText(
      camt(
        '08',
        '101.50',
        '<AmtDtls><TxAmt><Amt Ccy="EUR">100.00</Amt></TxAmt></AmtDtls>' +
          '<Chrgs><Rcrd><Amt Ccy="USD">1.50</Amt><ChrgInclInd>false</ChrgInclInd></Rcrd></Chrgs>',
        '<Chrgs><Rcrd><Amt Ccy="EUR">2.00</Amt><CdtDbtInd>CRDT</CdtDbtInd></Rcrd></Chrgs>',
      ),
    );
    const spool = createSpool();
    try {
      const written: SpoolItem[] = [{ kind: 'entry', statement: 0, entry: { ...entries[0]!, where: '' } }];
      await spool.write(written);
      await spool.end();
      const read: SpoolItem[] = [];
      for await (const items of spool.read()) read.push(...items);
      expect(read).toEqual(written);
      expect(read[0]).toMatchObject({
        entry: {
          charges: [{ amount: 200n, currency: 'EUR', direction: 'credit', included: null }],
          details: [{ charges: [{ amount: 150n, currency: 'USD', direction: null, included: false }] }],
        },
      });
    } finally {
      spool.remove();
    }
  });
});

describe('foldedChargeOf: split only what adds up', () => {
  const line = {
    direction: 'debit' as const,
    amount: '10150',
    currency: 'EUR',
    transactionCode: 'PMNT/ICDT/ESCT',
    transactionAmount: '10000',
  };
  const charge = (
    amount: string,
    o: { currency?: string | null; included?: boolean | null; credit?: boolean } = {},
  ) => ({
    amount,
    currency: o.currency === undefined ? 'EUR' : o.currency,
    direction: o.credit ? ('credit' as const) : ('debit' as const),
    included: o.included ?? null,
  });

  it('folds included charges that make the debit exactly', () => {
    expect(foldedChargeOf({ ...line, charges: [charge('150', { included: true })] })).toBe(150n);
    expect(foldedChargeOf({ ...line, charges: [charge('100'), charge('50')] })).toBe(150n);
    // a charge not included is not in the debit: the rest adds up
    expect(foldedChargeOf({ ...line, charges: [charge('150'), charge('999', { included: false })] })).toBe(150n);
  });

  it('leaves the line whole otherwise', () => {
    const whole = [
      { ...line, charges: [charge('150', { currency: 'USD' })] },
      { ...line, charges: [charge('150', { currency: null })] },
      { ...line, charges: [charge('150', { credit: true })] },
      { ...line, charges: [charge('149', { included: true })] },
      { ...line, charges: [charge('151')] },
      { ...line, charges: [charge('150', { included: false })] },
      { ...line, charges: [charge('0', { included: true })], amount: '10000' },
      { ...line, charges: [charge('150')], transactionAmount: null },
      { ...line, charges: [charge('150')], transactionAmount: undefined },
      { ...line, charges: [] },
      { ...line },
      { ...line, charges: [charge('150')], direction: 'credit' as const },
      { ...line, charges: [charge('150')], transactionCode: 'PMNT/ICDT/CHRG' },
    ];
    expect(whole.map((l) => foldedChargeOf(l))).toEqual(whole.map(() => 0n));
  });
});

/** An MT940 of one debit of 101,50 with `line2` as the :61: supplementary details and `info` as its :86:. */
function mt940(line2: string | null, info: string): string {
  return [
    ':20:STMT',
    `:25:${ACCOUNT}`,
    ':28C:1/1',
    ':60F:C241104EUR1000,00',
    ':61:2411041104D101,50NTRFNONREF//T1',
    ...(line2 === null ? [] : [line2]),
    `:86:${info}`,
    ':62F:C241104EUR898,50',
    '-',
  ].join('\r\n');
}

describe("MT940 charges: SWIFT's /OCMT/ and /CHGS/ codes", () => {
  it('reads them from the :61: supplementary details, else a coded :86:', async () => {
    for (const text of [
      mt940('/OCMT/EUR100,00//CHGS/EUR1,50/', '/REMI/RS-SM1-2024-10-EUR'),
      mt940(null, '/OCMT/EUR100,00/CHGS/EUR1,50/REMI/RS-SM1-2024-10-EUR'),
    ]) {
      const { entries } = await mt940Text(text);
      expect(entries[0]!.details[0]).toMatchObject({
        amount: 100_00n,
        charges: [{ amount: 1_50n, currency: 'EUR', direction: null, included: null }],
      });
      const data = BankEntryBooked.schema.parse(eventOf(entries[0]!).data);
      expect(data).toMatchObject({ amount: '10150', transactionAmount: '10000' });
      expect(foldedChargeOf(data)).toBe(1_50n);
    }
  });

  it('takes an original amount in another currency as no transfer amount, and nothing without /CHGS/', async () => {
    const foreign = await mt940Text(mt940('/OCMT/USD110,00//CHGS/EUR1,50/', 'FOREIGN TRANSFER'));
    expect(foreign.entries[0]!.details[0]).toMatchObject({ amount: null, charges: [{ amount: 1_50n }] });
    expect(foldedChargeOf(BankEntryBooked.schema.parse(eventOf(foreign.entries[0]!).data))).toBe(0n);
    const none = await mt940Text(mt940('/OCMT/EUR101,50/', 'TRANSFER'));
    expect(none.entries[0]!.details[0]!.amount).toBeNull();
    expect(none.entries[0]!.details[0]).not.toHaveProperty('charges');
    // the German structured :86: has no such codes, nor free text: a "/CHGS/" in their text is remittance
    for (const info of ['116?00SEPA UEBERWEISUNG?20/CHGS/EUR1,50/', 'PAYMENT /CHGS/ INCLUDED', 'X/OCMT/1/CHGS/Z']) {
      const { entries } = await mt940Text(mt940(null, info));
      expect(entries[0]!.details[0]).not.toHaveProperty('charges');
    }
    const text = await mt940Text(mt940('FREE TEXT /CHGS/ SOMETHING', 'X'));
    expect(text.entries[0]!.details[0]).not.toHaveProperty('charges');
  });

  it('refuses a value that is not a currency and an amount, naming the line', async () => {
    const bad = [
      ['/CHGS/EUR-1,50/', ':61: /CHGS/ not an amount: "-1,50"'],
      ['/CHGS/eur1,50/', ':61: /CHGS/ not a currency code'],
      ['/CHGS/EUR1234567890123456,00/', ':61: /CHGS/ amount too large'],
      ['/OCMT/EUR1.00//CHGS/EUR1,50/', ':61: /OCMT/ not an amount: "1.00"'],
    ];
    for (const [line2, problem] of bad)
      await expect(mt940Text(mt940(line2!, 'X'), 'f.sta')).rejects.toThrow(`f.sta: line 5: ${problem}`);
    await expect(mt940Text(mt940(null, '/CHGS/EUR1,5x/'), 'f.sta')).rejects.toThrow(
      'f.sta: line 6: :86: /CHGS/ not an amount',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { decimalSum, decimalText, isIban, type PaymentOrder, pain001 } from '../../src/payout-runs/pain001';
import { debianErrors, debianXmllint, texts, wasmErrors } from './validate';

/** The payment file: valid against the stand-in schema, exact amounts and control sums, hostile text escaped. */

const HOSTILE = `Smith & Sons <Ltd> "quoted" 'x' ]]> \u0007bell`;

const order: PaymentOrder = {
  messageId: 'PR-2026-10-1',
  createdAt: '2026-11-27T10:15:30.123Z',
  executionDate: '2026-11-30',
  debtors: [
    { currency: 'EUR', account: 'DE89370400440532013000', name: 'Marketplace GmbH', bic: 'COBADEFFXXX' },
    { currency: 'JPY', account: '10010010/1234567890', name: 'Marketplace GmbH', bic: null },
    { currency: 'UAH', account: 'UA213223130000026007233566001', name: 'ТОВ «Маркетплейс»', bic: null },
  ],
  lines: [
    {
      currency: 'UAH',
      amount: 1234567n,
      reference: 'RS-SM-A-2026-10-UAH',
      creditorName: 'ФОП Коваль',
      creditorAccount: 'UA903052992990004149123456789',
    },
    {
      currency: 'EUR',
      amount: 5n,
      reference: 'RS-SM-B-2026-10-EUR-2',
      creditorName: HOSTILE,
      creditorAccount: 'FR1420041010050500013M02606',
    },
    {
      currency: 'EUR',
      amount: 99999999999n,
      reference: 'RS-SM-A-2026-10-EUR',
      creditorName: 'A'.repeat(200),
      creditorAccount: 'ACC-123',
      creditorAgent: 'DEUTDEFF',
    },
    {
      currency: 'JPY',
      amount: 1230000n,
      reference: 'RS-SM-C-2026-10-JPY',
      creditorName: 'Yamada KK',
      creditorAccount: 'JP0001',
      creditorAgent: 'BOTKJPJTXXX',
    },
  ],
};

describe('pain.001.001.09 writer', () => {
  const xml = pain001(order);
  const t = texts(xml);
  const all = (p: string) => t.filter((x) => x.path.endsWith(p));

  it('is valid against the stand-in schema (xmllint-wasm, and Debian xmllint when installed)', async () => {
    expect(await wasmErrors(xml)).toEqual([]);
    const debian = debianErrors(xml);
    if (debianXmllint) expect(debian).toEqual([]);
  });

  it('states every amount exactly in its currency’s decimals, from hundredths, and control sums that add up', () => {
    const amounts = all('CdtTrfTxInf/Amt/InstdAmt').map((x) => [x.attributes.Ccy, x.text]);
    // grouped by currency (sorted), by reference inside
    expect(amounts).toEqual([
      ['EUR', '999999999.99'],
      ['EUR', '0.05'],
      ['JPY', '12300'],
      ['UAH', '12345.67'],
    ]);
    expect(all('GrpHdr/NbOfTxs')[0]!.text).toBe('4');
    expect(all('GrpHdr/CtrlSum')[0]!.text).toBe('1000024645.71');
    expect(all('PmtInf/CtrlSum').map((x) => x.text)).toEqual(['1000000000.04', '12300', '12345.67']);
    expect(all('PmtInf/NbOfTxs').map((x) => x.text)).toEqual(['2', '1', '1']);
    expect(all('GrpHdr/MsgId')[0]!.text).toBe('PR-2026-10-1');
    expect(all('GrpHdr/CreDtTm')[0]!.text).toBe('2026-11-27T10:15:30Z');
    expect(all('ReqdExctnDt/Dt').map((x) => x.text)).toEqual(['2026-11-30', '2026-11-30', '2026-11-30']);
  });

  it('names debtors and creditors, IBAN or other account, BIC or NOTPROVIDED, the reference as remittance', () => {
    expect(all('PmtInf/Dbtr/Nm').map((x) => x.text)).toEqual([
      'Marketplace GmbH',
      'Marketplace GmbH',
      'ТОВ «Маркетплейс»',
    ]);
    expect(all('DbtrAcct/Id/IBAN').map((x) => x.text)).toEqual([
      'DE89370400440532013000',
      'UA213223130000026007233566001',
    ]);
    expect(all('DbtrAcct/Id/Othr/Id').map((x) => x.text)).toEqual(['10010010/1234567890']);
    expect(all('DbtrAgt/FinInstnId/BICFI').map((x) => x.text)).toEqual(['COBADEFFXXX']);
    expect(all('DbtrAgt/FinInstnId/Othr/Id').map((x) => x.text)).toEqual(['NOTPROVIDED', 'NOTPROVIDED']);
    expect(all('RmtInf/Ustrd').map((x) => x.text)).toEqual(all('PmtId/EndToEndId').map((x) => x.text));
    expect(all('RmtInf/Ustrd').map((x) => x.text)).toEqual([
      'RS-SM-A-2026-10-EUR',
      'RS-SM-B-2026-10-EUR-2',
      'RS-SM-C-2026-10-JPY',
      'RS-SM-A-2026-10-UAH',
    ]);
    expect(all('CdtrAcct/Id/Othr/Id').map((x) => x.text)).toEqual(['ACC-123', 'JP0001']);
    // the creditor's bank where the directory names it (an account that is not an IBAN is paid only with it)
    expect(all('CdtrAgt/FinInstnId/BICFI').map((x) => x.text)).toEqual(['DEUTDEFF', 'BOTKJPJTXXX']);
  });

  it('escapes hostile names (the parsed text is the name, a control character made a space) and cuts at 140', () => {
    const names = all('Cdtr/Nm').map((x) => x.text);
    expect(names).toContain(`Smith & Sons <Ltd> "quoted" 'x' ]]> bell`);
    expect(names).toContain('A'.repeat(140));
    expect(xml).not.toContain('<Ltd>');
    expect(xml).not.toMatch(/[\u0000-\u0008]/);
  });

  it('carries no internal vocabulary', () => {
    for (const word of ['recon', 'discrepanc', 'hold', 'sub-merchant', 'projection', 'payable'])
      expect(xml.toLowerCase()).not.toContain(word);
  });

  it('is the same bytes whatever order the lines come in', () => {
    expect(pain001({ ...order, lines: [...order.lines].reverse() })).toBe(xml);
  });

  it('refuses what no bank can take: a fraction of a yen, no debtor for a currency, no transfer', () => {
    expect(() => pain001({ ...order, lines: [{ ...order.lines[3]!, amount: 1230050n }] })).toThrow(
      /not a positive whole amount of JPY/,
    );
    expect(() => pain001({ ...order, debtors: order.debtors.slice(0, 1) })).toThrow(/no account to pay JPY from/);
    expect(() => pain001({ ...order, lines: [] })).toThrow(/one transfer at least/);
  });
});

describe('the schema catches a broken file (negative tests)', () => {
  const xml = pain001(order);
  const broken: [string, string][] = [
    ['no message id', xml.replace(/<MsgId>[^<]*<\/MsgId>/, '')],
    ['an amount with a comma', xml.replace('>0.05<', '>0,05<')],
    ['a negative amount', xml.replace('>0.05<', '>-0.05<')],
    ['a lower-case currency', xml.replace('Ccy="EUR"', 'Ccy="eur"')],
    ['an unknown payment method', xml.replaceAll('<PmtMtd>TRF</PmtMtd>', '<PmtMtd>WIRE</PmtMtd>')],
    ['elements out of order', xml.replace(/(<NbOfTxs>4<\/NbOfTxs>)\s*(<CtrlSum>[^<]*<\/CtrlSum>)/, '$2$1')],
    [
      'an end-to-end id over 35 characters',
      xml.replace('RS-SM-A-2026-10-UAH</EndToEndId>', `${'X'.repeat(36)}</EndToEndId>`),
    ],
    ['another namespace', xml.replace('pain.001.001.09', 'pain.001.001.03')],
    ['a bad BIC', xml.replace('COBADEFFXXX', 'cobadeff')],
  ];
  it.each(broken)('%s fails', async (_what, bad) => {
    expect(bad).not.toBe(xml);
    expect((await wasmErrors(bad)).length).toBeGreaterThan(0);
    if (debianXmllint) expect(debianErrors(bad)!.length).toBeGreaterThan(0);
  });
});

describe('amount helpers', () => {
  it('converts hundredths to each currency’s decimals exactly, with no float', () => {
    expect(decimalText(0n, 'EUR')).toBe('0.00');
    expect(decimalText(100000000000000000n, 'UAH')).toBe('1000000000000000.00');
    expect(decimalText(12345n, 'KWD')).toBe('123.450');
    expect(decimalText(12300n, 'JPY')).toBe('123');
    expect(decimalText(12345n, 'JPY')).toBeNull();
    expect(decimalSum(['0.1', '0.2', '123'])).toBe('123.3');
    expect(decimalSum(['9007199254740993.01', '0.99'])).toBe('9007199254740994.00');
  });
  it('tells an IBAN by its check digits', () => {
    expect(isIban('DE89370400440532013000')).toBe(true);
    expect(isIban('DE88370400440532013000')).toBe(false);
    expect(isIban('10010010')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import type { BankAccount } from '../../../src/config/bank';
import { checkBankFiles } from '../../../src/ingest/bank/import';
import { renderCamt053, renderMt940, type BankFileStatement } from '../../../src/sandbox/bank-files';
import { camtText, mt940Text, tempFile } from './support';

/**
 * Files a bank never sends, or an attacker would: each is refused with the file and the line or element
 * named, before anything is appended (checkBankFiles is the import's first reading).
 */
const UAH: BankAccount = { id: 'UA213223130000026007233566001', currency: 'UAH', role: 'settlement', name: null };
const base: BankFileStatement = {
  accountId: UAH.id,
  currency: 'UAH',
  statementId: 'H-1',
  openingDate: '2025-06-01',
  closingDate: '2025-06-01',
  openingBalance: 1000n,
  entries: [
    { direction: 'credit', amount: 500n, bookingDate: '2025-06-01', bankRef: 'A' },
    { direction: 'debit', amount: 200n, bookingDate: '2025-06-01', bankRef: 'B' },
  ],
};
const camt = renderCamt053(base);
const mt940 = renderMt940(base);

async function refusal(name: string, text: string | Buffer): Promise<string> {
  const file = tempFile(name, text);
  const err = await checkBankFiles([file], { accounts: [UAH] }).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err, `${name} was accepted`).toBeInstanceOf(Error);
  expect(err!.message).toContain(file);
  return err!.message;
}

async function accepted(name: string, text: string | Buffer) {
  const [f] = await checkBankFiles([tempFile(name, text)], { accounts: [UAH] });
  return f!;
}

describe('camt.053 hostile files', () => {
  it('truncated XML: the line is named', async () => {
    const m = await refusal('truncated.xml', camt.slice(0, Math.floor(camt.length * 0.7)));
    expect(m).toMatch(/line \d+, column \d+/);
  });
  it('an external entity (XXE) is refused at the DOCTYPE, nothing is read from disk', async () => {
    const xxe = camt
      .replace('<Document', '<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<Document')
      .replace('<Id>H-1</Id>', '<Id>&xxe;</Id>');
    const m = await refusal('xxe.xml', xxe);
    expect(m).toMatch(/DOCTYPE is not accepted/);
    expect(m).not.toContain('root:');
  });
  it('entity expansion (billion laughs) is refused', async () => {
    const lol =
      '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>\n' +
      camt.slice(camt.indexOf('<Document')).replace('<Id>H-1</Id>', '<Id>&lol2;</Id>');
    expect(await refusal('lol.xml', lol)).toMatch(/DOCTYPE/);
  });
  it('an undeclared entity is refused', async () => {
    expect(await refusal('entity.xml', camt.replace('<Id>H-1</Id>', '<Id>&nope;</Id>'))).toMatch(/not well-formed XML/);
  });
  it('a huge amount is refused, not rounded', async () => {
    const m = await refusal('huge.xml', camt.replace('>5.00</Amt>', '>123456789012345678901.00</Amt>'));
    expect(m).toMatch(/amount too large/);
    expect(m).toMatch(/Ntry/);
  });
  it('a negative amount is refused (the direction is CdtDbtInd)', async () => {
    expect(await refusal('negative.xml', camt.replace('>5.00</Amt>', '>-5.00</Amt>'))).toMatch(
      /not an amount: "-5.00"/,
    );
  });
  it('three decimals are refused unless the third is 0', async () => {
    expect(await refusal('decimals.xml', camt.replace('>5.00</Amt>', '>5.001</Amt>'))).toMatch(
      /more than two decimals/,
    );
    const f = await accepted('decimals-ok.xml', camt.replace('>5.00</Amt>', '>5.000</Amt>'));
    expect(f.statements[0]!.booked).toBe(2);
  });
  it('an entry in another currency than its statement', async () => {
    expect(await refusal('ccy.xml', camt.replace('<Amt Ccy="UAH">5.00', '<Amt Ccy="EUR">5.00'))).toMatch(
      /entry in EUR on a statement in UAH/,
    );
  });
  it('a missing opening or closing balance', async () => {
    const noOpening = camt.replace(/<Bal><Tp><CdOrPrtry><Cd>OPBD<\/Cd>.*?<\/Bal>/s, '');
    expect(await refusal('no-opening.xml', noOpening)).toMatch(/statement H-1 of account .*: no opening balance/);
    const noClosing = camt.replace(/<Bal><Tp><CdOrPrtry><Cd>CLBD<\/Cd>.*?<\/Bal>/s, '');
    expect(await refusal('no-closing.xml', noClosing)).toMatch(/no closing balance/);
  });
  it('a date that is not a day of the calendar', async () => {
    const m = await refusal('date.xml', camt.replace('<BookgDt><Dt>2025-06-01', '<BookgDt><Dt>2025-02-30'));
    expect(m).toMatch(/Stmt\[0\]\/Ntry\/BookgDt\/Dt.*not a day of the calendar: "2025-02-30"/);
  });
  it('an unknown status and a missing direction', async () => {
    expect(await refusal('sts.xml', camt.replace('<Cd>BOOK</Cd>', '<Cd>MAYBE</Cd>'))).toMatch(
      /expected BOOK, PDNG or INFO/,
    );
    expect(await refusal('dir.xml', camt.replace('<CdtDbtInd>CRDT</CdtDbtInd><Sts>', '<Sts>'))).toMatch(/CdtDbtInd/);
  });
  it('a camt.052 report is not a statement', async () => {
    expect(await refusal('report.xml', camt.replace(/BkToCstmrStmt/g, 'BkToCstmrAcctRpt'))).toMatch(/not a camt.053/);
  });
  it('a byte-order mark and CRLF line ends are accepted', async () => {
    const f = await accepted(
      'bom.xml',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(camt.replace(/\n/g, '\r\n'))]),
    );
    expect(f.statements[0]!.booked).toBe(2);
  });
  it('an empty file', async () => {
    expect(await refusal('empty.xml', '')).toBeTruthy();
  });
});

describe('MT940 hostile files', () => {
  it('mixed line endings and a BOM are accepted', async () => {
    const lines = mt940.split('\r\n');
    const mixed = lines.map((l, i) => l + (i % 3 === 0 ? '\n' : i % 3 === 1 ? '\r\n' : '\r')).join('');
    const { statements, entries } = await mt940Text(`\uFEFF${mixed}`);
    expect(statements[0]!.closing!.amount).toBe(1300n);
    expect(entries).toHaveLength(2);
  });
  it('a truncated file (no closing balance) is refused naming the statement', async () => {
    const cut = mt940.slice(0, mt940.indexOf(':62F:'));
    expect(await refusal('cut.sta', cut)).toMatch(/statement H-1\/00001\/001 .*no closing balance/);
  });
  it('a bad :61: line and a bad date name their line', async () => {
    const bad61 = mt940.replace(/:61:\d{10}C/, ':61:25060106XXC');
    expect(await refusal('bad61.sta', bad61)).toMatch(/line 5: :61: expected value date/);
    expect(await refusal('bad-date.sta', mt940.replace(':60F:C250601', ':60F:C251301'))).toMatch(
      /line 4: :60F: not a day of the calendar: "2025-13-01"/,
    );
  });
  it('an amount with a decimal point instead of a comma is refused', async () => {
    expect(await refusal('point.sta', mt940.replace(':62F:C250601UAH13,00', ':62F:C250601UAH13.00'))).toMatch(/:62F:/);
  });
  it('a statement that does not foot', async () => {
    const m = await refusal('foot.sta', mt940.replace(':62F:C250601UAH13,00', ':62F:C250601UAH13,01'));
    expect(m).toMatch(/does not foot.*difference 0.01 UAH/);
  });
  it('text that is no MT940 at all', async () => {
    expect(await refusal('junk.sta', ':20:X\nhello\n')).toMatch(/no opening balance|without :20:/);
  });
});

describe('camt parser keeps no whole file', () => {
  it('reads entries across chunk borders', async () => {
    const { entries } = await camtText(camt);
    expect(entries.map((e) => e.amount)).toEqual([500n, 200n]);
  });
});

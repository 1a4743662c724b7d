import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StatementsConfig } from '../../src/config/statements';
import { formatAmount } from '../../src/export/statements/pdf';
import { bridgeLabel, bridgeOf, pdfBridgeLabel, statementFileName } from '../../src/export/statements/workbooks';
import { issueStatements, type IssueResult } from '../../src/export/statements/issue';
import { parsePosition } from '../../src/store/types';
import { useStatementTest } from './support';

/**
 * The documents `recon statements` writes, read back from the files: a PDF beside every workbook with the
 * same figures; the header (issuer from the configuration, the sub-merchant's legal details and language
 * from the directory, a number per sub-merchant, the issue date of the recorded run); nothing internal on a
 * page a sub-merchant receives; the same statement issued again at its cut keeps its number, date and bytes.
 */

const hasPdftotext = (() => {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const t = useStatementTest({ pos: 'pos-documents', outPrefix: 'recon-documents-' });
const ISSUER: StatementsConfig = {
  issuerName: 'ТОВ «Маркетплейс»',
  issuerAddress: 'вул. Хрещатик, 1, Київ',
  issuerTaxId: '12345678',
  contact: 'payouts@marketplace.test',
  dispute: 'Reply within 30 days of the issue date.',
  language: 'en',
};
const deps = () => ({ ...t.deps, statements: ISSUER });
// words of how recon computes, never on a page a sub-merchant receives
const JARGON = /event|position|sha-?256|projection|\bcut\b|journal|receiver:/i;

beforeAll(async () => {
  await t.directory(
    [
      'sub_merchant_id,name,reserve_hold_days,legal_name,tax_id,address,language',
      'SM-UK,Квітка,30,"ТОВ ""Квітка""",87654321,"вул. Січових Стрільців, 5, Львів",uk',
      'SM-EN,Alpha Shop,30,,,,',
      '',
    ].join('\n'),
    { settle: false },
  );
  // a receiver the directory does not know: its statement is held whole, and says so in plain words
  await t.observe(t.sale('pay-stranger', '2025-01-12T10:00:00.000Z', 'Stranger Shop', 30_000n), '2025-01-13');
  await t.observe(
    t.sale('pay-uk-1', '2025-01-10T10:00:00.000Z', 'Квітка', 123_456n, { fee: 2_500n, reserve: 10_000n }),
    '2025-01-11',
  );
  await t.observe(t.sale('pay-uk-2', '2025-01-20T10:00:00.000Z', 'Квітка', 7_890_000n, { fee: 9_900n }), '2025-01-21');
  await t.observe(t.sale('pay-en-1', '2025-01-15T10:00:00.000Z', 'Alpha Shop', 50_000n, { fee: 1_000n }), '2025-01-16');
});

async function sheets(file: string): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(t.out, file));
  return wb;
}

const pdfText = (file: string) =>
  execFileSync('pdftotext', ['-layout', path.join(t.out, file), '-'], { encoding: 'utf8' });

// pdftotext gives the no-break space between groups of digits as a plain one
const amount = (minor: bigint, currency: string, lang: 'en' | 'uk') =>
  formatAmount(minor, currency, lang).replace(/\u00a0/g, ' ');

/** Every text of every sheet (all the sub-merchant's: finance's Audit sheet is a file of its own). */
function subMerchantPages(wb: ExcelJS.Workbook): string {
  const out: string[] = [];
  for (const ws of wb.worksheets) {
    out.push(ws.name, ws.headerFooter.oddHeader ?? '', ws.headerFooter.oddFooter ?? '');
    ws.eachRow((row) => {
      row.eachCell((c) => out.push(String(c.value)));
    });
  }
  return out.join('\n');
}

describe('statement documents', () => {
  let first: IssueResult;
  const issuedAt = new Date('2025-02-03T08:30:00.000Z');

  it.skipIf(!hasPdftotext)(
    'writes a PDF beside each workbook with the same figures, in the sub-merchant’s language',
    async () => {
      first = await issueStatements(deps(), { month: '2025-01', outDir: t.out, now: issuedAt });
      const names = first.files.map((f) => f.name).sort();
      expect(names).toEqual(
        [
          ...(['pdf', 'xlsx', 'audit'] as const).flatMap((file) => [
            statementFileName('SM-EN', '2025-01', false, 'Alpha Shop', file),
            statementFileName('SM-UK', '2025-01', false, 'Квітка', file),
            statementFileName('receiver:Stranger Shop', '2025-01', false, 'Stranger Shop', file),
          ]),
          'payouts-2025-01.xlsx',
        ].sort(),
      );
      // a readable, transliterated slug beside the id
      expect(names).toContain('SM-UK-kvitka-2025-01.pdf');
      expect(names).toContain('SM-EN-alpha-shop-2025-01.xlsx');
      expect(names).toContain('SM-EN-alpha-shop-2025-01-audit.xlsx');

      for (const [id, name, lang] of [
        ['SM-UK', 'Квітка', 'uk'],
        ['SM-EN', 'Alpha Shop', 'en'],
      ] as const) {
        const wb = await sheets(statementFileName(id, '2025-01', false, name));
        const text = pdfText(statementFileName(id, '2025-01', false, name, 'pdf'));
        const figures = first.figures.filter((f) => f.subMerchantId === id);
        // every bridge figure the workbook holds is in the PDF on the line of the same label, formatted the locale's way
        const summary = wb.worksheets[0]!;
        let checked = 0;
        summary.eachRow((row) => {
          const line = bridgeOf(figures).find((b) => bridgeLabel(b, lang) === row.getCell(1).value);
          if (!line) return;
          figures.forEach((f, i) => {
            const minor = BigInt(Math.round(Number(row.getCell(i + 2).value) * 100));
            const pdfLine = text.split('\n').find((l) => l.includes(pdfBridgeLabel(line, lang).slice(0, 25)));
            expect(pdfLine, `${id} ${line.key}`).toContain(amount(minor, f.currency, lang));
            checked++;
          });
        });
        expect(checked).toBe(bridgeOf(figures).length * figures.length);
        // every operation's net
        const ops = wb.worksheets.find((w) => w.name.startsWith(lang === 'uk' ? 'Операції' : 'Operations'))!;
        ops.eachRow((row, n) => {
          const net = row.getCell(9).value;
          if (n > 1 && typeof net === 'number' && row.getCell(3).value)
            expect(text).toContain(amount(BigInt(Math.round(net * 100)), 'UAH', lang));
        });
        // the header: issuer, number, issue date of the run, period, contact and disputes
        expect(text).toContain('ТОВ «Маркетплейс»');
        expect(text).toContain('12345678');
        expect(text).toContain(lang === 'uk' ? 'Виписка № 0001' : 'Statement no. 0001');
        expect(text).toContain(lang === 'uk' ? '03.02.2025' : '2025-02-03');
        expect(text).toContain('Europe/Kyiv');
        expect(text).toContain('payouts@marketplace.test');
        expect(text).toContain('Reply within 30 days');
        // properties: the real issue time, the document's name
        expect(wb.created?.toISOString()).toBe(issuedAt.toISOString());
        expect(wb.title).toContain(name);
        // nothing internal on the sub-merchant's pages; all of it on the Audit sheet of finance's file beside them
        expect(text).not.toMatch(JARGON);
        expect(subMerchantPages(wb)).not.toMatch(JARGON);
        const audit: string[] = [];
        const auditBook = await sheets(statementFileName(id, '2025-01', false, name, 'audit'));
        auditBook.getWorksheet('Audit')!.eachRow((row) => audit.push(String(row.getCell(5).value)));
        expect(audit).toContain(first.position);
        expect(audit).toContain(first.figuresSha256);
      }
      const stranger = first.files
        .filter((f) => f.subMerchantId === 'receiver:Stranger Shop' && !f.financeOnly)
        .map((f) => f.name);
      expect(stranger).toHaveLength(2);
      for (const f of stranger)
        if (f.endsWith('.pdf')) expect(pdfText(f)).not.toMatch(JARGON);
        else expect(subMerchantPages(await sheets(f))).not.toMatch(JARGON);
      const uk = pdfText('SM-UK-kvitka-2025-01.pdf');
      expect(uk).toContain('ТОВ "Квітка"');
      expect(uk).toContain('87654321');
      expect(uk).toContain('вул. Січових Стрільців, 5, Львів');
      expect(uk).toContain('Розрахунок виплати');
      // the PSP's words too: a sale and its status
      expect(uk).toMatch(/оплата\s+успішно/);
      expect(formatAmount(7_880_100n, 'UAH', 'uk')).toBe('78\u00a0801,00');
    },
  );

  it.skipIf(!hasPdftotext)('issued again at its cut, a statement keeps its number, issue date and bytes', async () => {
    const again = await issueStatements(deps(), {
      month: '2025-01',
      outDir: path.join(t.out, 'again'),
      atPosition: parsePosition(first.position),
      now: new Date('2025-03-15T12:00:00.000Z'),
    });
    expect(again.newEvent).toBe(false);
    expect(again.eventId).toBe(first.eventId);
    // every statement's files, finance's audit file with them
    const statements = (r: IssueResult) => r.files.filter((f) => f.subMerchantId).map((f) => [f.name, f.sha256]);
    expect(statements(again)).toEqual(statements(first));
    expect(statements(first).filter(([name]) => name!.endsWith('-audit.xlsx'))).toHaveLength(3);
    const text = execFileSync('pdftotext', [path.join(t.out, 'again', 'SM-EN-alpha-shop-2025-01.pdf'), '-'], {
      encoding: 'utf8',
    });
    expect(text).toContain('Statement no. 0001');
    expect(text).toContain('2025-02-03');
  });

  it.skipIf(!hasPdftotext)('numbers the next statement of a sub-merchant with the next number', async () => {
    await t.observe(t.sale('pay-en-2', '2025-02-15T10:00:00.000Z', 'Alpha Shop', 20_000n), '2025-02-16');
    const next = await issueStatements(deps(), {
      month: '2025-02',
      outDir: t.out,
      now: new Date('2025-03-02T09:00:00Z'),
    });
    const en = next.files.find((f) => f.name === 'SM-EN-alpha-shop-2025-02.pdf')!;
    expect(execFileSync('pdftotext', [en.path, '-'], { encoding: 'utf8' })).toContain('Statement no. 0002');
    expect(readFileSync(en.path).subarray(0, 5).toString()).toBe('%PDF-');
  });
});

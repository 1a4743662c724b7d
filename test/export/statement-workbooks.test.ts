import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  PAYOUTS_HEADER,
  checkStatementFileNames,
  figuresDigest,
  plainHeader,
  statementFileName,
  writePayoutsWorkbook,
  writeStatementWorkbook,
  type StatementFigures,
  type StatementLine,
  type StatementMeta,
} from '../../src/export/statements/workbooks';
import { writeAuditWorkbook } from '../../src/export/statements/audit';
import { ExportError } from '../../src/export/errors';
import { minorToMajor, moneyFormat, safeText, STALE_PARTIAL_MS } from '../../src/export/workbook/xlsx';

const dir = mkdtempSync(path.join(tmpdir(), 'recon-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function figures(over: Partial<StatementFigures> = {}): StatementFigures {
  const base = {
    subMerchantId: '3f0b7c1e-2f57-4a43-9d59-1f6c1d0e9a01',
    subMerchantName: 'Kvitka Flowers',
    currency: 'UAH',
    opening: 150_000n,
    gross: 1_234_567n,
    refunds: 10_050n,
    chargebacks: 2_000n,
    fees: 30_861n,
    reserveHeld: 61_728n,
    reserveReleased: 5_000n,
    operations: 3,
  };
  const f = { ...base, ...over };
  const netPayable = f.gross - f.refunds - f.chargebacks - f.fees - f.reserveHeld + f.reserveReleased;
  return {
    ...f,
    netPayable,
    closing: f.opening + netPayable,
    ...('netPayable' in over ? { netPayable: over.netPayable! } : {}),
  };
}

// Kyiv is UTC+2 in winter and UTC+3 from the last Sunday of March (2024-03-31 01:00 UTC).
const lines: StatementLine[] = [
  {
    at: new Date('2024-03-01T00:15:00.000Z'),
    orderId: 'ord-1',
    paymentId: 'pay-1',
    method: 'purchase',
    status: 'success',
    share: 1_000_000n,
    fee: 25_000n,
    reserve: 50_000n,
    net: 925_000n,
    eventIds: ['e1', 'e2'],
    paidWith: { payway: 'card', scheme: 'visa' },
    feeParts: { fixed: 5_000n, percent: 20_000n },
  },
  {
    at: new Date('2024-03-31T02:30:00.000Z'),
    orderId: '=HYPERLINK("http://evil","x")',
    paymentId: 'pay-2',
    method: 'purchase',
    status: 'success',
    share: 234_567n,
    fee: 5_861n,
    reserve: 11_728n,
    net: 216_978n,
    eventIds: ['e3'],
    paidWith: { payway: 'some_new_wallet', scheme: null },
  },
  {
    at: new Date('2024-03-15T10:00:00.000Z'),
    orderId: null,
    paymentId: '+1-2',
    method: 'refund',
    status: 'success',
    share: -10_050n,
    fee: 0n,
    reserve: 0n,
    net: -10_050n,
    eventIds: ['e4'],
  },
];

const meta = (f: StatementFigures[]): StatementMeta => ({
  month: '2024-03',
  timezone: 'Europe/Kyiv',
  position: '1234/56',
  figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', f),
});

async function* iter<T>(rows: readonly T[]): AsyncIterable<T> {
  for (const r of rows) yield r;
}

async function open(file: string): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  return wb;
}

describe('xlsx cell hygiene', () => {
  it('refuses amounts a spreadsheet number cannot hold exactly, converts the rest exactly', () => {
    expect(minorToMajor(123_45n)).toBe(123.45);
    expect(minorToMajor(-1n)).toBe(-0.01);
    expect(minorToMajor(999_999_999_999_999n)).toBe(9_999_999_999_999.99);
    // 16 significant digits: a spreadsheet keeps 15 (review13/xlsx-amount-sixteen-digits.test.ts)
    expect(() => minorToMajor(BigInt(Number.MAX_SAFE_INTEGER))).toThrow(ExportError);
    expect(() => minorToMajor(BigInt(Number.MAX_SAFE_INTEGER) + 1n)).toThrow(ExportError);
  });
  it('neutralises every formula-starting character', () => {
    for (const s of ['=1+2', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) expect(safeText(s)).toBe(`'${s}`);
    expect(safeText('plain')).toBe('plain');
    expect(safeText(null)).toBe('');
  });
  it('formats each currency with its own decimals', () => {
    expect(moneyFormat('EUR')).toBe('#,##0.00 "EUR";-#,##0.00 "EUR"');
    expect(moneyFormat('JPY')).toBe('#,##0 "JPY";-#,##0 "JPY"');
    expect(moneyFormat('KWD')).toBe('#,##0.000 "KWD";-#,##0.000 "KWD"');
  });
});

describe('statement workbook', () => {
  it('writes summary, operations and reserve schedule that read back cell by cell', async () => {
    const f = figures();
    const file = path.join(dir, 'one.xlsx');
    const reserve = [
      { heldOn: '2024-03-01', currency: 'UAH', held: 50_000n, releaseOn: '2024-05-30', released: 0n },
      { heldOn: '2023-12-02', currency: 'UAH', held: 5_000n, releaseOn: '2024-03-01', released: 5_000n },
    ];
    const written = await writeStatementWorkbook(file, { figures: [f], lines: () => iter(lines), reserve }, meta([f]));
    expect(written.lines).toBe(3);
    const wb = await open(file);
    // every sheet is the sub-merchant's: the workbook is e-mailed to it
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Summary', 'Operations', 'Reserve schedule']);

    const s = wb.getWorksheet('Summary')!;
    expect(s.getCell('B5').value).toBe('Kvitka Flowers');
    expect(s.getCell('B6').value).toBe(f.subMerchantId);
    expect(String(s.getCell('B3').value)).toContain('1 March 2024 – 31 March 2024 (time zone Europe/Kyiv)');
    expect(s.getCell('B8').value).toBe('no statement issued before');
    expect(s.getCell('B10').value).toBe('UAH');
    // the cut and the hash are in finance's audit file, not in the sub-merchant's workbook
    const auditFile = path.join(dir, 'one-audit.xlsx');
    await writeAuditWorkbook(auditFile, { figures: [f], lines: () => iter(lines) }, meta([f]), plainHeader(meta([f])));
    const auditBook = await open(auditFile);
    expect(auditBook.worksheets.map((w) => w.name)).toEqual(['Audit']);
    const audit = new Map<string, unknown>();
    auditBook.getWorksheet('Audit')!.eachRow((r) => audit.set(String(r.getCell(1).value), r.getCell(5).value));
    expect(audit.get('Cut at event-store position')).toBe('1234/56');
    expect(audit.get('Figures sha-256')).toBe(meta([f]).figuresSha256);
    expect(audit.get('Operation')).toBe(lines.at(-1)!.eventIds.join(' '));
    // opening, adjustments (none: no statement before), the six movements, net payable, held, released,
    // amount due, paid out, closing
    const bridge = [
      f.opening,
      0n,
      f.gross,
      -f.refunds,
      -f.chargebacks,
      -f.fees,
      -f.reserveHeld,
      f.reserveReleased,
      f.netPayable,
      0n,
      0n,
      f.netPayable,
      0n,
      f.closing,
    ];
    bridge.forEach((v, i) => {
      const c = s.getCell(`B${11 + i}`);
      expect(c.value).toBe(Number(v) / 100);
      expect(c.numFmt).toBe(moneyFormat('UAH'));
    });
    // the six movements sum to the net payable, and opening + adjustments + net = closing, exactly in minor units
    expect(bridge.slice(2, 8).reduce((a, b) => a + b, 0n)).toBe(f.netPayable);
    const check = s.getCell('B25').value as { formula: string; result: number };
    expect(check.formula).toBe('B11+B12+B19+B23-B24');
    // what Excel computes from the cells (exceljs drops a cached result of 0 when reading back)
    const cell = (a: string) => s.getCell(a).value as number;
    expect(Math.round((cell('B11') + cell('B12') + cell('B19') + cell('B23') - cell('B24')) * 100)).toBe(0);
    expect(s.getCell('B26').value).toBe(3);

    const o = wb.getWorksheet('Operations')!;
    expect(o.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(o.autoFilter).toBe('A1:L4');
    expect(o.getRow(1).values).toEqual([
      undefined,
      'Date and time (Europe/Kyiv)',
      'Order',
      'Payment',
      'Type',
      'Status',
      'Paid with',
      'Share',
      'Fee',
      'Fee, fixed part',
      'Fee, percentage part',
      'Reserve',
      'Net',
    ]);
    // dates are real dates holding the Kyiv wall-clock time (UTC+2 before the change, UTC+3 after)
    expect(o.getCell('A2').value).toEqual(new Date('2024-03-01T02:15:00.000Z'));
    expect(o.getCell('A2').numFmt).toBe('yyyy-mm-dd hh:mm:ss');
    expect(o.getCell('A3').value).toEqual(new Date('2024-03-31T05:30:00.000Z'));
    expect(o.getCell('A4').value).toEqual(new Date('2024-03-15T12:00:00.000Z'));
    lines.forEach((l, i) => {
      const r = o.getRow(i + 2);
      expect(r.getCell(2).value ?? '').toBe(safeText(l.orderId));
      expect(r.getCell(3).value).toBe(safeText(l.paymentId));
      expect(r.getCell(4).value).toBe(l.method);
      expect(r.getCell(7).value).toBe(Number(l.share) / 100);
      expect(r.getCell(8).value).toBe(Number(l.fee) / 100);
      expect(r.getCell(9).value).toBe(l.feeParts ? Number(l.feeParts.fixed) / 100 : null);
      expect(r.getCell(10).value).toBe(l.feeParts ? Number(l.feeParts.percent) / 100 : null);
      expect(r.getCell(11).value).toBe(Number(l.reserve) / 100);
      expect(r.getCell(12).value).toBe(Number(l.net) / 100);
      expect(r.getCell(12).numFmt).toBe(moneyFormat('UAH'));
      expect(r.getCell(13).value).toBeNull();
    });
    // the payment method in plain words: known words translated, the PSP's own value otherwise, "—" when none
    expect([2, 3, 4].map((i) => o.getRow(i).getCell(6).value)).toEqual(['Card · Visa', 'some_new_wallet', '—']);
    // formula injection: written as plain text with a leading apostrophe, never as a formula
    const injected = o.getCell('B3');
    expect(injected.type).toBe(ExcelJS.ValueType.String);
    expect(injected.formula).toBeUndefined();
    expect(injected.value).toBe(`'=HYPERLINK("http://evil","x")`);
    expect(o.getCell('C4').value).toBe(`'+1-2`);
    // totals row after a blank row, computed in minor units
    expect(o.getCell('A6').value).toBe('Total (3 lines)');
    expect(o.getCell('G6').value).toBe(Number(lines.reduce((a, l) => a + l.share, 0n)) / 100);
    expect(o.getCell('L6').value).toBe(Number(lines.reduce((a, l) => a + l.net, 0n)) / 100);
    // the fee's parts tie: fixed + percentage + the fee not split = the fee column's total (minor units)
    const minor = (a: string) => BigInt(Math.round((o.getCell(a).value as number) * 100));
    const split = lines.filter((l) => l.feeParts);
    expect(minor('I6')).toBe(split.reduce((a, l) => a + l.feeParts!.fixed, 0n));
    expect(minor('J6')).toBe(split.reduce((a, l) => a + l.feeParts!.percent, 0n));
    expect(o.getCell('A7').value).toBe('Fee not split by the payment provider');
    expect(minor('I6') + minor('J6') + minor('H7')).toBe(minor('H6'));
    expect(minor('H6')).toBe(lines.reduce((a, l) => a + l.fee, 0n));

    const r = wb.getWorksheet('Reserve schedule')!;
    expect(r.getCell('A2').value).toEqual(new Date(Date.UTC(2024, 2, 1)));
    expect(r.getCell('C2').value).toBe(500);
    expect(r.getCell('D2').value).toEqual(new Date(Date.UTC(2024, 4, 30)));
    expect(r.getCell('E3').value).toBe(50);
    // the month's totals, as in the bridge: held in March (not the December hold released in March), released in March
    expect(r.getCell('A5').value).toBe('Total of the month (held in it, released in it)');
    expect(r.getCell('C5').value).toBe(500);
    expect(r.getCell('E5').value).toBe(50);
  });

  it('shows an Adjustments total of 0 for a statement built on an earlier one when nothing changed since', async () => {
    const f = { ...figures(), previousStatement: '2024-02 at 1200/3', adjustments: 0n };
    const file = path.join(dir, 'adjusted-nothing.xlsx');
    await writeStatementWorkbook(
      file,
      { figures: [f], lines: () => iter(lines), adjustments: () => iter([]), reserve: [] },
      meta([f]),
    );
    const wb = await open(file);
    const adj = wb.getWorksheet('Adjustments')!;
    expect(adj.getCell('A2').value).toBeNull();
    expect([adj.getCell('A3').value, adj.getCell('B3').value, adj.getCell('H3').value]).toEqual(['Total', 'UAH', 0]);
  });

  it('puts each currency on its own operations sheet', async () => {
    const uah = figures();
    const eur = figures({
      currency: 'EUR',
      opening: 0n,
      gross: 1000n,
      refunds: 0n,
      chargebacks: 0n,
      fees: 10n,
      reserveHeld: 0n,
      reserveReleased: 0n,
      operations: 1,
    });
    const file = path.join(dir, 'two.xlsx');
    const eurLine: StatementLine = { ...lines[0]!, share: 1000n, fee: 10n, reserve: 0n, net: 990n };
    await writeStatementWorkbook(
      file,
      { figures: [uah, eur], lines: (c) => iter(c === 'EUR' ? [eurLine] : lines), reserve: [] },
      meta([uah, eur]),
    );
    const wb = await open(file);
    expect(wb.worksheets.map((w) => w.name)).toEqual([
      'Summary',
      'Operations EUR',
      'Operations UAH',
      'Reserve schedule',
    ]);
    expect(wb.getWorksheet('Summary')!.getCell('B10').value).toBe('EUR');
    expect(wb.getWorksheet('Summary')!.getCell('C10').value).toBe('UAH');
    expect(wb.getWorksheet('Operations EUR')!.getCell('L2').value).toBe(9.9);
  });

  it('refuses figures whose bridge does not add up, leaving no file behind', async () => {
    const bad = figures({ netPayable: 1n });
    const file = path.join(dir, 'bad.xlsx');
    await expect(
      writeStatementWorkbook(file, { figures: [bad], lines: () => iter([]), reserve: [] }, meta([bad])),
    ).rejects.toMatchObject({ code: 'EXPORT_BRIDGE_MISMATCH' });
    expect(existsSync(file)).toBe(false);
  });

  it('removes the temporary files a killed run left long ago, never one that may be being written', async () => {
    const f = figures();
    const folder = path.join(dir, 'stale');
    mkdirSync(folder, { recursive: true });
    const stale = path.join(folder, '.statement.xlsx.0badc0de.partial');
    const fresh = path.join(folder, '.statement.xlsx.0fee1bad.partial');
    const other = path.join(folder, '.other.xlsx.0badc0de.partial');
    for (const file of [stale, fresh, other]) writeFileSync(file, 'half a workbook');
    const old = (Date.now() - STALE_PARTIAL_MS - 60_000) / 1000;
    utimesSync(stale, old, old);
    utimesSync(other, old, old);
    await writeStatementWorkbook(
      path.join(folder, 'statement.xlsx'),
      { figures: [f], lines: () => iter(lines), reserve: [] },
      meta([f]),
    );
    expect(readdirSync(folder).sort()).toEqual([
      '.other.xlsx.0badc0de.partial',
      '.statement.xlsx.0fee1bad.partial',
      'statement.xlsx',
    ]);
  });

  it('writes under a temporary name and renames only when complete', async () => {
    const f = figures();
    const file = path.join(dir, 'temp', 'statement.xlsx');
    let seenDuring: string[] = [];
    async function* slow(): AsyncIterable<StatementLine> {
      yield lines[0]!;
      await new Promise((r) => setTimeout(r, 20));
      seenDuring = readdirSync(path.dirname(file));
      yield lines[1]!;
    }
    await writeStatementWorkbook(file, { figures: [f], lines: () => slow(), reserve: [] }, meta([f]));
    // mid-write, the final name does not exist; only a temporary file may (its stream opens asynchronously)
    expect(seenDuring).not.toContain('statement.xlsx');
    for (const name of seenDuring) expect(name).toMatch(/^\.statement\.xlsx\.[0-9a-f]{8}\.partial$/);
    expect(readdirSync(path.dirname(file))).toEqual(['statement.xlsx']);

    // a failure mid-way leaves neither the final name nor the temporary file
    const failing = path.join(dir, 'temp2', 'statement.xlsx');
    async function* broken(): AsyncIterable<StatementLine> {
      yield lines[0]!;
      throw new Error('database went away');
    }
    await expect(
      writeStatementWorkbook(failing, { figures: [f], lines: () => broken(), reserve: [] }, meta([f])),
    ).rejects.toThrow('database went away');
    expect(readdirSync(path.dirname(failing))).toEqual([]);
  });
});

describe('statement file names', () => {
  it('keep a safe id as it is, and give other ids a hash so that no two share a file', () => {
    expect(statementFileName('SM-001', '2025-01')).toBe('SM-001-2025-01.xlsx');
    const kafe = statementFileName('receiver:Кафе', '2025-01');
    const salo = statementFileName('receiver:Сало', '2025-01');
    expect(kafe).toMatch(/^receiver_____-[0-9a-f]{8}-2025-01\.xlsx$/);
    expect(salo).toMatch(/^receiver_____-[0-9a-f]{8}-2025-01\.xlsx$/);
    expect(kafe).not.toBe(salo);
    expect(() => checkStatementFileNames(['receiver:Кафе', 'receiver:Сало', 'SM-001'], '2025-01')).not.toThrow();
  });

  it('a run in which two sub-merchants would write one file (case-insensitive file systems) is refused by name', () => {
    const err = (() => {
      try {
        checkStatementFileNames(['SM-a', 'SM-b', 'SM-A'], '2025-01');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ExportError);
    expect(err).toMatchObject({
      code: 'EXPORT_FILE_NAME_COLLISION',
      message:
        'sub-merchants "SM-a" and "SM-A" would write the same statement file SM-A-2025-01.xlsx; nothing was written',
    });
  });
});

describe('payouts index', () => {
  it('has the exact header, one row per sub-merchant and currency, amounts as numbers, totals per currency', async () => {
    const a = figures();
    const b = figures({
      subMerchantId: '00000000-0000-4000-8000-000000000001',
      subMerchantName: '@evil',
      gross: 333n,
      refunds: 0n,
      chargebacks: 0n,
      fees: 3n,
      reserveHeld: 0n,
      reserveReleased: 0n,
      operations: 1,
    });
    const c = figures({
      currency: 'EUR',
      gross: 100n,
      refunds: 0n,
      chargebacks: 0n,
      fees: 1n,
      reserveHeld: 0n,
      reserveReleased: 0n,
      operations: 1,
    });
    const file = path.join(dir, 'payouts-2024-03.xlsx');
    await writePayoutsWorkbook(file, [a, c, b], meta([a, b, c]));
    const wb = await open(file);
    expect(wb.worksheets[0]!.name).toBe('Payouts');
    const p = wb.worksheets[0]!;
    expect((p.getRow(1).values as unknown[]).slice(1)).toEqual([...PAYOUTS_HEADER]);
    expect(p.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(p.autoFilter).toBe('A1:V4');
    const expected = [b, c, a];
    expected.forEach((f, i) => {
      const r = p.getRow(i + 2);
      expect(r.getCell(1).value).toBe(f.subMerchantId);
      expect(r.getCell(2).value).toBe(safeText(f.subMerchantName));
      expect(r.getCell(3).value).toBe(f.currency);
      const amounts = [f.gross, f.refunds, f.chargebacks, f.fees, f.reserveHeld, f.reserveReleased, f.netPayable];
      amounts.forEach((v, j) => {
        expect(r.getCell(4 + j).type).toBe(ExcelJS.ValueType.Number);
        expect(r.getCell(4 + j).value).toBe(Number(v) / 100);
        expect(r.getCell(4 + j).numFmt).toBe(moneyFormat(f.currency));
      });
      expect(r.getCell(11).value).toBe(f.operations);
      // no statement issued before: nothing to adjust, and the amount due is the net payable
      expect([r.getCell(12).value, r.getCell(13).value]).toEqual([0, Number(f.netPayable) / 100]);
    });
    expect(p.getCell('B2').value).toBe("'@evil");
    expect(p.getRow(5).cellCount).toBe(0);
    expect(p.getCell('A6').value).toBe('Total');
    expect(p.getCell('C6').value).toBe('EUR');
    expect(p.getCell('J6').value).toBe(Number(c.netPayable) / 100);
    expect(p.getCell('C7').value).toBe('UAH');
    expect(p.getCell('J7').value).toBe(Number(a.netPayable + b.netPayable) / 100);
    expect(p.getCell('K7').value).toBe(4);
    const run = wb.getWorksheet('Run')!;
    expect(run.getCell('B3').value).toBe('1234/56');
  });

  it('hashes figures independently of their order and sensitively to any change', () => {
    const a = figures();
    const b = figures({ subMerchantId: 'b', gross: 1n });
    expect(figuresDigest('2024-03', 'UTC', [a, b])).toBe(figuresDigest('2024-03', 'UTC', [b, a]));
    expect(figuresDigest('2024-03', 'UTC', [a, b])).not.toBe(
      figuresDigest('2024-03', 'UTC', [a, { ...b, fees: b.fees + 1n }]),
    );
  });
});

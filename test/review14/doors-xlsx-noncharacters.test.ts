import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import JSZip from 'jszip';
import { SaxesParser } from 'saxes';
import { describe, expect, it } from 'vitest';
import { issueStatements } from '../../src/export/statements/issue';
import { registerObserved } from '../../src/ingest/observations';
import { parseRegisterRecord } from '../../src/psp/parse';
import { useStatementTest } from '../export/support';

/**
 * The PSP door keeps a register row's `receiverName` as data, U+FFFE and U+FFFF included (they are neither
 * control characters nor surrogates). XML 1.0 has neither character, and exceljs writes them as they are: the
 * month's workbooks (the receiver's statement and the payouts index) held sheets that no XML reader takes, and
 * Excel offers to "repair" such a file by dropping its content.
 */

const POS = 'pos-nonchar';
const t = useStatementTest({ pos: POS, outPrefix: 'recon-review14-nonchar-' });

/** The first well-formedness error of each XML part of a workbook. */
async function xmlErrors(file: string): Promise<string[]> {
  const zip = await JSZip.loadAsync(readFileSync(file));
  const errors: string[] = [];
  for (const part of Object.keys(zip.files).filter((f) => f.endsWith('.xml') || f.endsWith('.rels'))) {
    const parser = new SaxesParser();
    let first: string | null = null;
    parser.on('error', (e) => {
      first ??= `${path.basename(file)} ${part}: ${e.message}`;
    });
    parser.write(await zip.file(part)!.async('string')).close();
    if (first) errors.push(first);
  }
  return errors;
}

describe('a receiver name holding U+FFFE and U+FFFF', () => {
  it('gives workbooks whose every part is well-formed XML', async () => {
    const name = 'Cafe\uFFFE Nord\uFFFF';
    const row = t.sale('p-nonchar', '2025-01-10T10:00:00.000Z', name, 1_000n);
    const raw = JSON.stringify({
      ...row,
      amount: undefined,
      originalAmount: '10.00',
      receiverAmount: '10.00',
      customerFee: '0',
      merchantFee: '0',
      receiverFee: '0',
      reserveAmount: '0',
      other: undefined,
      dateTime: String(Date.parse(row.dateTime!)),
    });
    const parsed = parseRegisterRecord(raw);
    expect(parsed.ok).toBe(true);
    const k = registerObserved(POS, raw, parsed.ok ? parsed.value : row, {
      source: 'register',
      reportId: 'rep',
      window: { from: '2025-01-01', to: '2025-01-31' },
      observedAt: '2025-02-01T00:00:00.000Z',
    });
    await t.store.append(k.stream, [k.event]);
    await t.settle();
    await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
    const books = readdirSync(t.out).filter((n) => n.endsWith('.xlsx'));
    expect(books.length).toBeGreaterThanOrEqual(2);
    const errors = (await Promise.all(books.map((b) => xmlErrors(path.join(t.out, b))))).flat();
    expect(errors).toEqual([]);
    // the name is still shown, without the two characters
    const statement = books.find((b) => !b.startsWith('payouts-'))!;
    const zip = await JSZip.loadAsync(readFileSync(path.join(t.out, statement)));
    const sheets = await Promise.all(
      Object.keys(zip.files)
        .filter((f) => f.startsWith('xl/worksheets/sheet'))
        .map((f) => zip.file(f)!.async('string')),
    );
    expect(sheets.some((s) => s.includes('Cafe Nord'))).toBe(true);
  });
});

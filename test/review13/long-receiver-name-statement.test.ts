import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { issueStatements } from '../../src/export/statements/issue';
import { registerObserved } from '../../src/ingest/observations';
import { parseRegisterRecord } from '../../src/psp/parse';
import { useStatementTest } from '../export/support';

/**
 * The PSP door accepts a register row's `receiverName` of any length (only NUL, lone surrogates and the like are
 * refused). A receiver unknown to the directory gets a statement under `receiver:<name>`, and its file name
 * carried the whole name: a name of 300 letters made a file name over the 255 bytes a file system allows
 * (ENAMETOOLONG), and the whole month's statements failed, the other sub-merchants' with them.
 */

const POS = 'pos-long-name';
const t = useStatementTest({ pos: POS, outPrefix: 'recon-review13-long-name-' });

describe('a receiver name of 300 characters', () => {
  it('is accepted at the PSP door, and the month is still issued with a file name a file system can hold', async () => {
    const long = `Cafe${'A'.repeat(296)}`;
    const rows = [
      t.sale('p-long', '2025-01-10T10:00:00.000Z', long, 1_000n),
      t.sale('p-short', '2025-01-11T10:00:00.000Z', 'Short', 2_000n),
    ];
    for (const row of rows) {
      // through the door: the raw JSON a register report would carry
      const raw = JSON.stringify({
        ...row,
        amount: undefined,
        originalAmount: '10.00',
        receiverAmount: (Number(row.receiverAmount) / 100).toFixed(2),
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
    }
    await t.settle();
    const r = await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
    expect(r.statements).toBe(2);
    const names = readdirSync(t.out);
    const workbooks = names.filter((n) => n.endsWith('.xlsx') && !n.startsWith('payouts-'));
    // a statement workbook and finance's audit file per sub-merchant, every name within the limit
    expect(workbooks.filter((n) => !n.endsWith('-audit.xlsx'))).toHaveLength(2);
    expect(workbooks.filter((n) => n.endsWith('-audit.xlsx'))).toHaveLength(2);
    for (const n of names) expect(Buffer.byteLength(n)).toBeLessThanOrEqual(255);
  });
});

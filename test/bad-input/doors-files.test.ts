import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { FeeScheduleLine } from '../../src/events/order-events';
import { applySubMerchantDirectory, SubMerchantDirectoryError } from '../../src/ingest/sub-merchant-directory';
import {
  formatCsvIssue,
  importSubMerchants,
  parseSubMerchantCsv,
  readSubMerchantDirectory,
  type SubMerchantRow,
} from '../../src/ingest/sub-merchants';
import { importFeeContract, readFeeContract } from '../../src/ingest/fee-contract';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { useTestStore } from '../support/db';
import {
  DIRECTORY_HEAD,
  directoryCases,
  FEE_HEAD,
  feeCases,
  type FileCase,
  nameIsRefused,
  nameText,
} from './doors-files.cases';

/**
 * The fee contract and the sub-merchant directory (issue 23): every case of doors-files.cases.ts read from a
 * file and imported, with the exact refusal (file, line, column) and the store counted; all or nothing, also
 * when the store itself refuses a row; generated names against an oracle; then every projection to the head.
 */

const fx = useTestStore();
const dir = mkdtempSync(path.join(tmpdir(), 'recon-doors-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (ext: string, text: string | Buffer) => {
  const p = path.join(dir, `case-${++n}.${ext}`);
  writeFileSync(p, text);
  return p;
};
const eventCount = async () => (await fx.store.readAll()).length;
const expected = (k: FileCase, p: string) => k.refused.map((r) => r.replace('<file>', p));

describe('fee contract door', () => {
  it.each(feeCases.map((k) => [k.name, k] as const))('%s', async (_name, k) => {
    const p = file('csv', `${FEE_HEAD}\n${k.rows}`);
    const before = await eventCount();
    const r = readFeeContract(p);
    if (k.refused.length) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issues.map(formatCsvIssue)).toEqual(expected(k, p));
      // refused whole: the good line 2 is not imported either
      expect(await eventCount()).toBe(before);
    } else {
      expect(r.ok).toBe(true);
      if (r.ok) await importFeeContract(fx.store, r.lines, { file: p });
      expect(await eventCount()).toBe(before + 2);
    }
  });

  it('bytes that are not UTF-8 are refused naming their line, never read as U+FFFD', async () => {
    const p = file(
      'csv',
      Buffer.concat([Buffer.from(`${FEE_HEAD}\nsm-1,purchase,EUR,1,0,2025-01-01,\nsm-\xff`, 'latin1')]),
    );
    const r = readFeeContract(p);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map(formatCsvIssue)).toEqual([`${p}:3: not UTF-8 text (save the file as UTF-8)`]);
  });

  it('is imported whole or not at all, also when the store refuses a line (one transaction)', async () => {
    const before = await eventCount();
    const good: FeeScheduleLine & { line: number } = {
      subMerchantId: 'sm-atomic-1',
      method: 'purchase',
      currency: 'EUR',
      effectiveFrom: '2025-01-01',
      percent: '1',
      fixed: '0',
      rounding: 'half_up',
      line: 2,
    };
    // a line no reader gives (PostgreSQL cannot store a NUL): the store's refusal must leave nothing behind
    const unstorable = { ...good, subMerchantId: 'sm-atomic-\u00002', line: 3 };
    await expect(importFeeContract(fx.store, [good, unstorable], { file: 'fees.csv' })).rejects.toThrow();
    expect(await eventCount()).toBe(before);
  });
});

describe('sub-merchant directory door', () => {
  it.each(directoryCases.map((k) => [k.name, k] as const))('%s', async (_name, k) => {
    const p = file('csv', `${DIRECTORY_HEAD}\n${k.rows}`);
    const before = await eventCount();
    const r = readSubMerchantDirectory(p);
    if (k.refused.length) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.issues.map(formatCsvIssue)).toEqual(expected(k, p));
      // as every command applies it: refused with every problem named, nothing appended (not even line 2)
      const applied = applySubMerchantDirectory({ store: fx.store, source: p, log: silentLogger });
      await expect(applied).rejects.toBeInstanceOf(SubMerchantDirectoryError);
      await expect(applied).rejects.toThrow(`${p}:3 (column `);
      expect(await eventCount()).toBe(before);
    } else {
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.rows.map((row) => row.name)).toEqual(['Good Shop', k.accepted]);
    }
  });

  it('bytes that are not UTF-8 are refused naming their line', () => {
    const p = file('csv', Buffer.from(`${DIRECTORY_HEAD}\nsm-1,A,1,,,\nsm-2,Caf\xe9,1,,,\n`, 'latin1'));
    const r = readSubMerchantDirectory(p);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map(formatCsvIssue)).toEqual([`${p}:3: not UTF-8 text (save the file as UTF-8)`]);
  });

  it('is imported whole or not at all: a row the store refuses leaves the rows before it unwritten', async () => {
    const before = await eventCount();
    const row = (id: string, name: string, line: number): SubMerchantRow => ({
      subMerchantId: id,
      name,
      reserveHoldDays: 30,
      file: 'dir.csv',
      line,
    });
    // on main the first row was written, then the second failed as INTERNAL
    const rows = [row('sm-atomic-a', 'Atomic A', 2), row('sm-atomic-b', 'Atomic\u0000B', 3)];
    await expect(importSubMerchants(fx.store, rows)).rejects.toThrow();
    expect(await eventCount()).toBe(before);
    // the same rows corrected: both written, once
    const fixed = [rows[0]!, row('sm-atomic-b', 'Atomic B', 3)];
    expect(await importSubMerchants(fx.store, fixed)).toEqual({ registered: 2, unchanged: 0 });
    expect(await importSubMerchants(fx.store, fixed)).toEqual({ registered: 0, unchanged: 2 });
    expect(await eventCount()).toBe(before + 2);
  });

  it('generated names: refused naming file, line and column name, or kept as trimmed (fast-check)', () => {
    let refused = 0;
    let kept = 0;
    fc.assert(
      fc.property(nameText, (name) => {
        const cell = `"${name.replace(/"/g, '""')}"`;
        const r = parseSubMerchantCsv(`sub_merchant_id,name,reserve_hold_days\nsm-gen,${cell},1\n`, 'gen.csv');
        if (nameIsRefused(name)) {
          expect(r.ok).toBe(false);
          if (!r.ok) {
            expect(r.issues).toHaveLength(1);
            expect(r.issues[0]).toMatchObject({ file: 'gen.csv', line: 2, column: 'name' });
          }
          refused++;
        } else {
          expect(r).toEqual({
            ok: true,
            rows: [{ subMerchantId: 'sm-gen', name: name.trim(), reserveHoldDays: 1, file: 'gen.csv', line: 2 }],
          });
          kept++;
        }
      }),
      { numRuns: 300, seed: 2100 },
    );
    expect(refused).toBeGreaterThan(30);
    expect(kept).toBeGreaterThan(30);
  });

  it('after the corpus every projection runs to the head of the store', async () => {
    const deps = { sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: 'Europe/Kyiv', graceHours: 48 };
    let report = await runProjections(deps, { batchSize: 500 });
    for (let i = 0; i < 100 && report.projections.some((p) => p.position !== report.head); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      report = await runProjections(deps, { batchSize: 500 });
    }
    expect(report.head).not.toBeNull();
    for (const p of report.projections) expect(p.position, p.name).toBe(report.head);
    const names = await fx.db.sql<{ id: string }[]>`select sub_merchant_id as id from recon.sub_merchants order by 1`;
    expect(names.map((r) => r.id)).toEqual(['sm-atomic-a', 'sm-atomic-b']);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { subMerchantStream } from '../../src/events/ledger-events';
import {
  importSubMerchants,
  parseCsvRecords,
  parseSubMerchantCsv,
  readSubMerchantDirectory,
} from '../../src/ingest/sub-merchants';
import { runProjections } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import { projection as journal } from '../../projections/journal';
import { useTestStore } from '../support/db';
import { waitVisible } from './visible';

describe('sub-merchant CSV', () => {
  it('reads quoted fields, trims names, defaults an empty hold to 90', () => {
    const r = parseSubMerchantCsv(
      '\ufeffsub_merchant_id,name,reserve_hold_days\r\nSM-1,"  Kyiv ""Crafts"", Ltd ",30\r\nSM-2,Lviv Books,\n\nSM-3,"Two, Ltd",  7 \n',
      'a.csv',
    );
    expect(r).toEqual({
      ok: true,
      rows: [
        { subMerchantId: 'SM-1', name: 'Kyiv "Crafts", Ltd', reserveHoldDays: 30, file: 'a.csv', line: 2 },
        { subMerchantId: 'SM-2', name: 'Lviv Books', reserveHoldDays: 90, file: 'a.csv', line: 3 },
        { subMerchantId: 'SM-3', name: 'Two, Ltd', reserveHoldDays: 7, file: 'a.csv', line: 5 },
      ],
    });
  });

  it('refuses a name of two lines (it would print an extra line on statements), naming its line', () => {
    const r = parseSubMerchantCsv(
      'sub_merchant_id,name,reserve_hold_days\nSM-1,A,1\n\nSM-3,"Two\nlines",  7 \n',
      'a.csv',
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => [i.file, i.line, i.column])).toEqual([['a.csv', 4, 'name']]);
  });

  it('accepts columns in any order', () => {
    const r = parseSubMerchantCsv('name,reserve_hold_days,sub_merchant_id\nA,1,X\n', 'b.csv');
    expect(r.ok && r.rows[0]).toMatchObject({ subMerchantId: 'X', name: 'A', reserveHoldDays: 1 });
  });

  it('names file, line and column of every problem', () => {
    const r = parseSubMerchantCsv('sub_merchant_id,name,reserve_hold_days\nSM-1,,30\n,B,x\nSM-3,C\n', 'bad.csv');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => [i.file, i.line, i.column])).toEqual([
      ['bad.csv', 2, 'name'],
      ['bad.csv', 3, 'sub_merchant_id'],
      ['bad.csv', 3, 'reserve_hold_days'],
      ['bad.csv', 4, null],
    ]);
  });

  it('requires the header', () => {
    const r = parseSubMerchantCsv('SM-1,A,30\n', 'h.csv');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0]!.message).toMatch(/header must be sub_merchant_id,name,reserve_hold_days/);
    expect(parseSubMerchantCsv('', 'e.csv').ok).toBe(false);
  });

  it('reports an unclosed quote and stray quotes', () => {
    expect(parseCsvRecords('a,"b\nc')).toMatchObject({ ok: false, line: 1 });
    expect(parseCsvRecords('a,b"c"\n')).toMatchObject({ ok: false });
    expect(parseCsvRecords('a,"b"c\n')).toMatchObject({ ok: false });
  });

  it('reads every *.csv of a directory and refuses one name for two ids', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sm-'));
    writeFileSync(path.join(dir, 'a.csv'), 'sub_merchant_id,name,reserve_hold_days\nSM-1,Kyiv Crafts,30\n');
    writeFileSync(path.join(dir, 'b.csv'), 'sub_merchant_id,name,reserve_hold_days\nSM-2,Lviv Books,\n');
    writeFileSync(path.join(dir, 'notes.txt'), 'ignored');
    const ok = readSubMerchantDirectory(dir);
    expect(ok.ok && ok.rows.map((r) => r.subMerchantId)).toEqual(['SM-1', 'SM-2']);
    writeFileSync(path.join(dir, 'c.csv'), 'sub_merchant_id,name,reserve_hold_days\nSM-9,Kyiv Crafts,30\n');
    const dup = readSubMerchantDirectory(dir);
    expect(dup.ok).toBe(false);
    if (!dup.ok) expect(dup.issues[0]).toMatchObject({ file: path.join(dir, 'c.csv'), line: 2, column: 'name' });
  });
});

describe('sub-merchant import', () => {
  const fx = useTestStore();

  const rows = (hold: number, name = 'Kyiv Crafts') => {
    const r = parseSubMerchantCsv(
      `sub_merchant_id,name,reserve_hold_days\nSM-1,${name},${hold}\nSM-2,Lviv Books,\n`,
      'd.csv',
    );
    if (!r.ok) throw new Error('fixture');
    return r.rows;
  };

  it('appends new and changed rows only; the latest wins in the projection, even when a value changes back', async () => {
    expect(await importSubMerchants(fx.store, rows(30))).toEqual({ registered: 2, unchanged: 0 });
    expect(await importSubMerchants(fx.store, rows(30))).toEqual({ registered: 0, unchanged: 2 });
    expect(await importSubMerchants(fx.store, rows(45))).toEqual({ registered: 1, unchanged: 1 });
    expect(await importSubMerchants(fx.store, rows(30))).toEqual({ registered: 1, unchanged: 1 });
    expect(
      (await fx.store.readStream(subMerchantStream('SM-1'))).map(
        (e) => (e.data as { reserveHoldDays: number }).reserveHoldDays,
      ),
    ).toEqual([30, 45, 30]);
    await waitVisible(fx.db.sql, fx.store);
    await runProjections({
      sql: fx.db.sql,
      store: fx.store,
      log: silentLogger,
      timezone: 'UTC',
      graceHours: 48,
      projections: [journal],
    });
    const dir = await fx.db.sql`select sub_merchant_id, name, reserve_hold_days from recon.sub_merchants order by 1`;
    expect(dir.map((r) => ({ ...r }))).toEqual([
      { sub_merchant_id: 'SM-1', name: 'Kyiv Crafts', reserve_hold_days: 30 },
      { sub_merchant_id: 'SM-2', name: 'Lviv Books', reserve_hold_days: 90 },
    ]);
  });
});

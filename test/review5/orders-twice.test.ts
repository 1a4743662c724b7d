import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importOrderFile } from '../../src/ingest/orders/import';
import { useTestStore } from '../support/db';

/**
 * Review 5: the orders file imported again under another name, with a BOM and CRLF line ends, as NDJSON of the
 * same orders, and by two imports at once: nothing more is stored, never a conflict.
 */

const t = useTestStore();
const dir = mkdtempSync(path.join(tmpdir(), 'recon-r5-orders-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const CSV = `order_id,amount,currency,created_at,split,customer_reference,amended_at,cancelled_at
r5-1,100.00,EUR,2025-01-05T10:00:00Z,sm-a:60.00;sm-b:40.00,cust-9,,
r5-2,25.50,EUR,2025-01-05T12:00:00+02:00,,,,
`;
const count = async () => {
  const [row] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from es_events`;
  return row!.n;
};

describe('review5: the orders file imported twice', () => {
  it('another name, BOM and CRLF, later, and two at once: stored once', async () => {
    expect(await importOrderFile(t.store, file('a.csv', CSV), 'csv')).toMatchObject({ ok: true, appended: 2 });
    const once = await count();
    const again = await importOrderFile(t.store, file('b-renamed.csv', `\ufeff${CSV.replace(/\n/g, '\r\n')}`), 'csv', {
      importedAt: new Date('2030-01-01T00:00:00Z'),
    });
    expect(again).toMatchObject({ ok: true, appended: 0, duplicates: 2 });
    const both = await Promise.all([
      importOrderFile(t.store, file('c.csv', CSV), 'csv'),
      importOrderFile(t.store, file('d.csv', CSV), 'csv'),
    ]);
    expect(both.every((r) => r.ok)).toBe(true);
    expect(await count()).toBe(once);
  });
});

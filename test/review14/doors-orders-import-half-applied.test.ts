import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OrderConflictError, importOrderFile } from '../../src/ingest/orders/import';
import { useTestStore } from '../support/db';

/**
 * `recon orders import` checks the whole file first, then appended it in batches of 2,000 orders, one
 * transaction each. A version the store already holds with other values is found only when its batch is
 * appended: the import was refused naming the line, but every batch before it had been written. A file of
 * 2,100 orders whose last line conflicted left 2,000 of them in the store, the file half applied.
 */

const t = useTestStore();
const dir = mkdtempSync(path.join(tmpdir(), 'recon-review14-orders-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const HEADER = 'order_id,amount,currency,created_at\n';

const orderEvents = async () => {
  const [r] = await t.db.sql<{ n: string }[]>`select count(*)::text as n from es_events where stream_id like 'order-%'`;
  return Number(r!.n);
};

describe('an order file whose last line conflicts with a stored version', () => {
  it('is refused naming the line, and none of its lines is stored', async () => {
    const first = await importOrderFile(
      t.store,
      file('first.csv', `${HEADER}late,10.00,EUR,2025-01-05T10:00:00Z\n`),
      'csv',
    );
    expect(first).toMatchObject({ ok: true, appended: 1 });
    const lines = Array.from({ length: 2100 }, (_, i) => `b-${i},${(i + 1).toFixed(2)},EUR,2025-01-06T10:00:00Z`);
    // the same version of "late", with another amount: a conflict only the store can see
    lines.push('late,11.00,EUR,2025-01-05T10:00:00Z');
    const big = file('big.csv', `${HEADER}${lines.join('\n')}\n`);
    const refused = await importOrderFile(t.store, big, 'csv').then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(OrderConflictError);
    expect((refused as OrderConflictError).issue).toMatchObject({ file: 'big.csv', line: 2102 });
    expect((refused as Error).message).toContain('big.csv:2102: order late: this version is already recorded');
    expect(await orderEvents()).toBe(1);
    // corrected, the same file imports whole, and again adds nothing
    lines[lines.length - 1] = 'late,10.00,EUR,2025-01-05T10:00:00Z';
    const fixed = file('fixed.csv', `${HEADER}${lines.join('\n')}\n`);
    expect(await importOrderFile(t.store, fixed, 'csv')).toMatchObject({ ok: true, appended: 2100, duplicates: 1 });
    expect(await importOrderFile(t.store, fixed, 'csv')).toMatchObject({ ok: true, appended: 0, duplicates: 2101 });
    expect(await orderEvents()).toBe(2101);
  });
});

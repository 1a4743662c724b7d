import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importOrderFile } from '../../src/ingest/orders/import';
import { orderInput } from '../../src/ingest/orders/input';
import { useTestStore } from '../support/db';

/**
 * An order's `customer_reference` is free text the shop fills in; a whole card number typed there (a shop that
 * puts the payer's card as its reference) was stored in `OrderPlaced` and `recon.orders` as written, although
 * card numbers are never stored (README, "Secrets and card data"). Now masked to the first six and last four
 * digits, as the PSP's and the bank's texts are.
 */

const PAN = '4111111111111111';
const MASKED = '411111******1111';
const t = useTestStore();
const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-orders-'));

describe('a card number in an order', () => {
  it('a customer_reference holding a card number is stored masked (file and API input)', async () => {
    const r = orderInput({
      order_id: 'pan-1',
      amount: '10.00',
      currency: 'EUR',
      created_at: '2025-01-05T10:00:00Z',
      customer_reference: `card 4111 1111 1111 1111`,
    });
    expect(r.ok).toBe(true);
    expect(JSON.stringify(r)).not.toContain('4111 1111 1111 1111');

    const file = path.join(dir, 'orders.csv');
    writeFileSync(
      file,
      `order_id,amount,currency,created_at,customer_reference\npan-2,10.00,EUR,2025-01-05T10:00:00Z,${PAN}\n`,
    );
    expect(await importOrderFile(t.store, file, 'csv')).toMatchObject({ ok: true, appended: 1 });
    const rows = await t.db.sql<{ d: string }[]>`select data::text as d from es_events where stream_id like 'order-%'`;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.d).not.toContain(PAN);
    expect(JSON.parse(rows[0]!.d).customerReference).toBe(MASKED);
    // the same file again is the same order: nothing added
    expect(await importOrderFile(t.store, file, 'csv')).toMatchObject({ ok: true, appended: 0 });
  });
});

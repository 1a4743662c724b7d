import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A statement's held items (its "Held pending investigation" sheet and the PDF's section, held-sheet.ts
 * `heldLines`) are in the order of their day, order and payment. That order was `localeCompare`'s, the collation
 * of the process's locale (LANG, LC_ALL): a worker started under da_DK sorts "aa" after "z", one under cs_CZ
 * "ch" after "h", so the same statement issued again on another machine listed its held items in another order.
 */

const REPO = path.resolve(__dirname, '../..');
const ORDERS = ['ORD-aa1', 'ORD-b2', 'ORD-ch3', 'ORD-h4', 'ORD-z5', 'ord-y6'];

const SCRIPT = `
import { heldLines } from './src/export/statements/held-sheet.ts';
const orders = ${JSON.stringify(ORDERS)};
const day = new Date('2025-03-10T10:00:00Z');
const held = (orderId, i) => ({ discrepancyId: 'd' + i, reason: 'under investigation', receiverName: 'Alpha Shop',
  currency: 'EUR', amount: 100n, type: 'status_mismatch', orderId, paymentId: 'p' + i, occurredAt: day });
const holds = [...orders].reverse().map(held);
process.stdout.write(JSON.stringify(heldLines([{ currency: 'EUR', holds }], 'Europe/Kyiv').map((h) => h.orderId)));
`;

function heldOrderUnder(locale: string): string[] {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    cwd: REPO,
    env: { ...process.env, LANG: locale, LC_ALL: locale },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`held order under ${locale}: ${r.stderr}`);
  return JSON.parse(r.stdout) as string[];
}

describe('held items in a statement', () => {
  it('are in the same order whatever the locale of the process writing it', () => {
    const orders = ['C.UTF-8', 'en_US.UTF-8', 'da_DK.UTF-8', 'cs_CZ.UTF-8'].map((l) => [l, heldOrderUnder(l)]);
    for (const [locale, order] of orders) expect([locale, order]).toEqual([locale, orders[0]![1]]);
    expect(orders[0]![1]).toHaveLength(ORDERS.length);
  }, 60_000);
});

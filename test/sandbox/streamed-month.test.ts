import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLines } from '../../src/cli/demo-intent';
import { sandboxIntent } from '../../src/sandbox/intent';
import type { Operation } from '../../src/sandbox/model';
import { generateScenario } from '../../src/sandbox/scenario';

/**
 * A month of 1M payments is generated order by order, never held (issue 26): the scenario streamed (all
 * orders, or window by window as the PSP's reports serve them) is the scenario gathered in memory, order by
 * order; the marketplace's order file written line by line is the file built as one string.
 */

const OPTIONS = { seed: 'streamed-month', month: '2026-09', timezone: 'Europe/Kyiv', payments: 400 };
const dir = mkdtempSync(path.join(tmpdir(), 'recon-streamed-month-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const key = (op: Operation) => `${op.transactionId} ${op.method} ${op.at}`;

describe('the streamed scenario', () => {
  const scenario = generateScenario(OPTIONS);
  const inMemory = Array.from({ length: scenario.orderCount }, (_, i) => scenario.order(i));

  it('streams the same orders as gathered by index, and as a second generation of the same seed', () => {
    expect([...scenario.orders()]).toEqual(inMemory);
    expect([...generateScenario(OPTIONS).orders()]).toEqual(inMemory);
    expect(inMemory).toHaveLength(400);
  });

  it('window by window (a day each), the same operations as the whole month at once', () => {
    const all = inMemory.flatMap((o) => o.operations);
    const first = Math.min(...all.map((op) => op.at));
    const last = Math.max(...all.map((op) => op.at));
    const windowed: Operation[] = [];
    for (let from = first; from <= last; from += 86_400_000)
      windowed.push(...scenario.operations({ from, to: Math.min(from + 86_400_000, last + 1) }));
    expect(windowed.map(key).sort()).toEqual(all.map(key).sort());
    expect(windowed.length).toBe(all.length);
  });
});

describe("the marketplace's orders streamed", () => {
  const scenario = generateScenario(OPTIONS);
  const intent = sandboxIntent(scenario);

  it('the CSV and NDJSON files written line by line are the files built in memory', () => {
    const csv = path.join(dir, 'orders.csv');
    const ndjson = path.join(dir, 'orders.ndjson');
    writeLines(csv, intent.ordersCsvLines());
    writeLines(ndjson, intent.ordersNdjsonLines());
    expect(readFileSync(csv, 'utf8')).toBe(intent.ordersCsv());
    expect(readFileSync(ndjson, 'utf8')).toBe(intent.ordersNdjson());
    expect(intent.ordersCsv().trimEnd().split('\n')).toHaveLength(intent.orderCount + 1);
    expect(intent.orders).toHaveLength(intent.orderCount);
  });

  it('knows which orders the file holds without holding them', () => {
    const inFile = new Set(intent.orders.map((o) => o.order_id));
    for (const order of scenario.orders()) expect(intent.isOrdered(order.orderId)).toBe(inFile.has(order.orderId));
    const orphan = intent.groundTruth.find((t) => t.type === 'payment_without_order');
    expect(orphan && intent.isOrdered(orphan.orderId)).toBe(false);
    const neverPaid = intent.groundTruth.find((t) => t.type === 'order_not_at_psp')!;
    expect(intent.isOrdered(neverPaid.orderId)).toBe(true);
  });

  it('the same intent from a second generation of the same seed', () => {
    const again = sandboxIntent(generateScenario(OPTIONS));
    expect(again.ordersCsv()).toBe(intent.ordersCsv());
    expect(again.feeContractCsv()).toBe(intent.feeContractCsv());
    expect(again.groundTruth).toEqual(intent.groundTruth);
  });
});

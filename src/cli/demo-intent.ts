import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { pspSideOrderTruth, sandboxIntentOf } from '../sandbox/intent';
import type { Scenario } from '../sandbox/scenario';
import type { EventStore } from '../store/types';
import { importFeeContract, readFeeContract } from '../ingest/fee-contract';
import { importOrderFile } from '../ingest/orders/import';

/**
 * `recon demo`'s intent step: writes the sandbox world's orders (CSV and NDJSON) and fee contract into `dir`
 * and imports the CSV and the contract, as `recon orders import` and `recon fees import` would.
 */
export async function importSandboxIntent(store: EventStore, scenario: Scenario, dir: string) {
  const intent = sandboxIntentOf(scenario);
  mkdirSync(dir, { recursive: true });
  const orders = path.join(dir, 'orders.csv');
  const contract = path.join(dir, 'fee-contract.csv');
  writeLines(orders, intent.ordersCsvLines());
  writeLines(path.join(dir, 'orders.ndjson'), intent.ordersNdjsonLines());
  writeFileSync(contract, intent.feeContractCsv());
  const imported = await importOrderFile(store, orders, 'csv');
  if (!imported.ok) throw new Error(`sandbox orders refused: ${JSON.stringify(imported.issues[0])}`);
  const lines = readFeeContract(contract);
  if (!lines.ok) throw new Error(`sandbox fee contract refused: ${JSON.stringify(lines.issues[0])}`);
  const fees = await importFeeContract(store, lines.lines, { file: contract });
  const truth: Record<string, number> = {};
  for (const t of intent.groundTruth) truth[t.type] = (truth[t.type] ?? 0) + 1;
  // what recon must find: the orders' own injections and those the PSP-side injections cause
  const expected = [...intent.groundTruth, ...pspSideOrderTruth(scenario, intent)].map(orderFindingKey).sort();
  return {
    orders: intent.orderCount,
    appended: imported.appended,
    feeLines: lines.lines.length,
    feeSet: fees.set,
    truth,
    expected,
  };
}

/** Writes the lines to the file in chunks of about 1 MB, so that a month of 1M orders is never one string. */
export function writeLines(file: string, lines: Iterable<string>): void {
  const fd = openSync(file, 'w');
  try {
    let chunk = '';
    for (const line of lines) {
      chunk += line;
      if (chunk.length >= 1 << 20) {
        writeSync(fd, chunk);
        chunk = '';
      }
    }
    if (chunk) writeSync(fd, chunk);
  } finally {
    closeSync(fd);
  }
}

/** One order discrepancy as the demo compares them: type, order id, payment id and, for a fee, the sub-merchant. */
export function orderFindingKey(d: {
  type: string;
  orderId: string | null;
  paymentId: string | null;
  subMerchantId: string | null;
}): string {
  return `${d.type} ${d.orderId ?? '-'} ${d.paymentId ?? '-'}${d.type.startsWith('fee_') ? ` ${d.subMerchantId ?? '-'}` : ''}`;
}

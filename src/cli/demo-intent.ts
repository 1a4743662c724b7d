import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sandboxIntent } from '../sandbox/intent';
import type { Scenario } from '../sandbox/scenario';
import type { EventStore } from '../store/types';
import { importFeeContract, readFeeContract } from '../intent/fee-contract';
import { importOrderFile } from '../intent/order-import';

/**
 * `recon demo`'s intent step: writes the sandbox world's orders (CSV and NDJSON) and fee contract into `dir`
 * and imports the CSV and the contract, as `recon orders import` and `recon fees import` would.
 */
export async function importSandboxIntent(store: EventStore, scenario: Scenario, dir: string) {
  const intent = sandboxIntent(scenario);
  mkdirSync(dir, { recursive: true });
  const orders = path.join(dir, 'orders.csv');
  const contract = path.join(dir, 'fee-contract.csv');
  writeFileSync(orders, intent.ordersCsv());
  writeFileSync(path.join(dir, 'orders.ndjson'), intent.ordersNdjson());
  writeFileSync(contract, intent.feeContractCsv());
  const imported = await importOrderFile(store, orders, 'csv');
  if (!imported.ok) throw new Error(`sandbox orders refused: ${JSON.stringify(imported.issues[0])}`);
  const lines = readFeeContract(contract);
  if (!lines.ok) throw new Error(`sandbox fee contract refused: ${JSON.stringify(lines.issues[0])}`);
  const fees = await importFeeContract(store, lines.lines, { file: contract });
  const truth: Record<string, number> = {};
  for (const t of intent.groundTruth) truth[t.type] = (truth[t.type] ?? 0) + 1;
  return {
    orders: intent.orders.length,
    appended: imported.appended,
    feeLines: lines.lines.length,
    feeSet: fees.set,
    truth,
  };
}

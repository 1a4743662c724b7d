import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncRange } from '../../src/ingest/sync';
import { importSubMerchants, parseSubMerchantCsv } from '../../src/ingest/sub-merchants';
import { importOrderFile } from '../../src/ingest/orders/import';
import { importFeeContract, parseFeeContract } from '../../src/ingest/fee-contract';
import { sandboxIntent } from '../../src/sandbox/intent';
import { generateScenario } from '../../src/sandbox/scenario';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { sandboxSyncDeps } from '../support/sync-deps';
import { orderDiscrepancies, projectOrders } from './support';

/**
 * The sandbox's world synced from its PSP through the real client, its orders imported from the files the
 * sandbox writes (CSV, then the same orders as NDJSON) and its fee contract: recon finds exactly the
 * differences the sandbox injected between its orders and the PSP, and nothing else.
 */
const OPTIONS = { seed: 'intent-truth', month: '2025-01', timezone: 'UTC', payments: 120, injections: 'none' as const };
const scenario = generateScenario(OPTIONS);
const intent = sandboxIntent(scenario);
const dir = mkdtempSync(path.join(tmpdir(), 'recon-intent-'));

let sandbox: Sandbox;
let db: TestDatabase;
let store: EventStore;

beforeAll(async () => {
  sandbox = await startSandbox({ scenario: OPTIONS });
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const dirRows = parseSubMerchantCsv(scenario.subMerchantCsv(), 'sub-merchants.csv');
  if (!dirRows.ok) throw new Error('sandbox directory refused');
  await importSubMerchants(store, dirRows.rows);
  const contract = parseFeeContract(intent.feeContractCsv(), 'fee-contract.csv');
  if (!contract.ok) throw new Error(JSON.stringify(contract.issues.slice(0, 3)));
  await importFeeContract(store, contract.lines, { file: 'fee-contract.csv' });
  await syncRange(
    sandboxSyncDeps(db, sandbox, { pollMaxMs: 20, client: { timeoutMs: 5_000, retryBaseMs: 5, retryMaxMs: 20 } }),
    { from: '2025-01-01', to: '2025-02-23' },
  );
}, 240_000);

afterAll(async () => {
  await sandbox?.close();
  await store?.close();
  await db?.drop();
});

describe("the sandbox's orders and fee contract", () => {
  it('injects every kind of difference', () => {
    expect([...new Set(intent.groundTruth.map((t) => t.type))].sort()).toEqual([
      'fee_above_contract',
      'fee_below_contract',
      'order_not_at_psp',
      'payment_without_order',
      'split_differs_from_order',
    ]);
    expect(intent.groundTruth.filter((t) => t.type === 'split_differs_from_order')).toHaveLength(2);
  });

  it('the CSV and the NDJSON files are the same orders (same events)', async () => {
    const csv = path.join(dir, 'orders.csv');
    const ndjson = path.join(dir, 'orders.ndjson');
    writeFileSync(csv, intent.ordersCsv());
    writeFileSync(ndjson, intent.ordersNdjson());
    const a = await importOrderFile(store, csv, 'csv');
    expect(a).toMatchObject({ ok: true, appended: intent.orders.length, duplicates: 0 });
    const b = await importOrderFile(store, ndjson, 'ndjson');
    expect(b).toMatchObject({ ok: true, appended: 0, duplicates: intent.orders.length });
  });

  it('recon finds exactly the injected differences', async () => {
    await projectOrders(db.sql, store);
    const found = (await orderDiscrepancies(db.sql))
      .filter((d) => d.status === 'open')
      .map(
        (d) =>
          `${d.type} ${d.order_id} ${d.payment_id ?? '-'}${d.type.startsWith('fee_') ? ` ${d.sub_merchant_id}` : ''}`,
      )
      .sort();
    const truth = intent.groundTruth
      .map(
        (t) => `${t.type} ${t.orderId} ${t.paymentId ?? '-'}${t.type.startsWith('fee_') ? ` ${t.subMerchantId}` : ''}`,
      )
      .sort();
    expect(found).toEqual(truth);
  }, 120_000);
});

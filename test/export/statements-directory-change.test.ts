import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { issueStatements, ledgerStatementQueries, type StatementDeps } from '../../src/export/statements';
import { registerObserved } from '../../src/ingest/observations';
import { importSubMerchants, parseSubMerchantCsv } from '../../src/ledger/sub-merchants';
import { runProjections, type RunnerDeps } from '../../src/ledger/runner';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { waitVisible } from '../ledger/visible';

/**
 * A receiver unknown to the directory is stated as `receiver:<name>`. When the directory later learns it
 * (id SM-GHOST), the next month's statement must open at what January's statement said for that receiver
 * (1,000), not at 0 with the whole history re-paid as an "adjustment".
 * (Found in review.)
 */

const TZ = 'Europe/Kyiv';
const POS = 'pos-r2';
let db: TestDatabase;
let store: EventStore;
let project: RunnerDeps;
let deps: StatementDeps;
const out = mkdtempSync(path.join(tmpdir(), 'recon-directory-change-'));

function sale(paymentId: string, dateTime: string, receiver: string, amount: bigint): NormalizedRegisterRecord {
  return {
    projectId: POS, orderId: `order-${paymentId}`, paymentId, method: 'purchase', status: 'success', dateTime, currency: 'EUR',
    amount: null, originalAmount: String(amount), customerFee: '0', merchantFee: '0', receiverName: receiver, receiverAmount: String(amount),
    receiverFee: '0', reserveAmount: '0', cardMask: null, payway: 'card', other: {},
  };
}

async function observe(r: NormalizedRegisterRecord, observedAt: string): Promise<void> {
  const k = registerObserved(POS, JSON.stringify(r), r, { source: 'register', reportId: `rep-${observedAt}`, window: { from: '2025-01-01', to: '2025-03-01' }, observedAt });
  await store.append(k.stream, [k.event]);
  await waitVisible(db.sql, store);
  await runProjections(project);
}

async function directory(csvText: string): Promise<void> {
  const csv = parseSubMerchantCsv(csvText, 'directory.csv');
  if (!csv.ok) throw new Error(JSON.stringify(csv.issues));
  await importSubMerchants(store, csv.rows);
  await waitVisible(db.sql, store);
  await runProjections(project);
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  project = { sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, projections: [journal] };
  deps = { sql: db.sql, store, log: silentLogger, timezone: TZ };
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

describe('statements: a placeholder receiver that the directory later knows', () => {
  it('February opens at January\'s stated closing of receiver:Ghost Shop once Ghost Shop is SM-GHOST (no re-payment, no refusal)', async () => {
    await observe(sale('pay-g1', '2025-01-15T10:00:00.000Z', 'Ghost Shop', 1_000n), '2025-01-16T00:00:00.000Z');
    const jan = await issueStatements(deps, { month: '2025-01', outDir: out });
    expect(jan.figures.map((f) => [f.subMerchantId, f.closing])).toEqual([['receiver:Ghost Shop', 1_000n]]);

    // the directory learns the receiver; February has one more sale
    await directory('sub_merchant_id,name,reserve_hold_days\nSM-GHOST,Ghost Shop,30\n');
    await observe(sale('pay-g2', '2025-02-10T10:00:00.000Z', 'Ghost Shop', 200n), '2025-02-11T00:00:00.000Z');

    // the figures as issueStatements computes them (without the Adjustments sheet's own check)
    const { adjustments: _omit, ...noAdjustmentSheet } = ledgerStatementQueries(db.sql);
    const figures = (await issueStatements({ ...deps, queries: noAdjustmentSheet }, { month: '2025-02', outDir: mkdtempSync(path.join(out, 'b-')) })).figures;
    const ghost = figures.find((f) => f.subMerchantId === 'SM-GHOST');
    // January already stated (and paid) the 1,000: February's amount due is its own 200 only
    expect({ opening: ghost?.opening, adjustments: ghost?.adjustments, amountDue: (ghost?.adjustments ?? 0n) + (ghost?.netPayable ?? 0n) })
      .toEqual({ opening: 1_000n, adjustments: 0n, amountDue: 200n });
  });

  it('the real run (with the Adjustments sheet) issues February instead of refusing it', async () => {
    const feb = await issueStatements(deps, { month: '2025-02', outDir: out });
    expect(feb.figures.find((f) => f.subMerchantId === 'SM-GHOST')).toMatchObject({ opening: 1_000n, adjustments: 0n, netPayable: 200n, closing: 1_200n });
  });
});

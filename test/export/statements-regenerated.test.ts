import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { issueStatements, type StatementDeps } from '../../src/export/statements';
import { registerObserved } from '../../src/ingest/observations';
import { importSubMerchants, parseSubMerchantCsv } from '../../src/ledger/sub-merchants';
import { runProjections, type RunnerDeps } from '../../src/ledger/runner';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import { parsePosition, type EventStore } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { waitVisible } from '../ledger/visible';

/**
 * `--at-position` exists to regenerate a statement already sent (docs/outputs.md). Doing so for one
 * sub-merchant appends a new StatementIssued (its filter differs from the original full run). The next
 * month builds on the run of the latest cut, not on the latest issue: taken by event order, it once
 * opened at the OLD cut and paid again what a later re-issue of that month had already stated (found in
 * review).
 */

const TZ = 'Europe/Kyiv';
const POS = 'pos-r2b';
let db: TestDatabase;
let store: EventStore;
let project: RunnerDeps;
let deps: StatementDeps;
const out = mkdtempSync(path.join(tmpdir(), 'recon-regenerated-'));

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
  await settle();
}

async function settle(): Promise<void> {
  await waitVisible(db.sql, store);
  await runProjections(project);
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  project = { sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, projections: [journal] };
  deps = { sql: db.sql, store, log: silentLogger, timezone: TZ };
  const csv = parseSubMerchantCsv('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A,30\n', 'directory.csv');
  if (!csv.ok) throw new Error(JSON.stringify(csv.issues));
  await importSubMerchants(store, csv.rows);
  await settle();
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

describe('statements: regenerating a sent statement for proof', () => {
  it('does not change what the next month opens at', async () => {
    await observe(sale('p1', '2025-01-10T10:00:00.000Z', 'Shop A', 1_000n), '2025-01-11T00:00:00.000Z');
    const janFirst = await issueStatements(deps, { month: '2025-01', outDir: out });
    // a late January sale; January is issued again (as now known) for SM-A: it states the 300
    await observe(sale('p2', '2025-01-20T10:00:00.000Z', 'Shop A', 300n), '2025-02-02T00:00:00.000Z');
    const janAgain = await issueStatements(deps, { month: '2025-01', outDir: out, subMerchantId: 'SM-A' });
    expect(janAgain.figures[0]).toMatchObject({ netPayable: 1_300n, closing: 1_300n });
    await observe(sale('p3', '2025-02-10T10:00:00.000Z', 'Shop A', 50n), '2025-02-11T00:00:00.000Z');

    const before = await issueStatements(deps, { month: '2025-02', outDir: out });
    expect(before.figures[0]).toMatchObject({ opening: 1_300n, adjustments: 0n, netPayable: 50n });

    // finance regenerates the statement sent first, for SM-A alone, to prove what it said
    const proof = await issueStatements(deps, { month: '2025-01', outDir: mkdtempSync(path.join(out, 'proof-')), subMerchantId: 'SM-A', atPosition: parsePosition(janFirst.position) });
    expect(proof.figuresSha256).not.toBe(''); // the proof itself is fine
    await observe(sale('p4', '2025-03-10T10:00:00.000Z', 'Other receiver', 1n), '2025-03-11T00:00:00.000Z'); // moves the checkpoint past it

    const after = await issueStatements(deps, { month: '2025-02', outDir: out });
    // nothing about SM-A changed: February must still open at 1,300 (what January's latest statement said)
    expect(after.figures.find((f) => f.subMerchantId === 'SM-A')).toMatchObject({ opening: 1_300n, adjustments: 0n, netPayable: 50n });
  });
});

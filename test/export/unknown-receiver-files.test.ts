import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedRegisterRecord } from '../../src/events/ingest-events';
import { issueStatements } from '../../src/export/statements';
import { registerObserved } from '../../src/ingest/observations';
import { runProjections, type RunnerDeps } from '../../src/ledger/runner';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { waitVisible } from '../ledger/visible';

/**
 * Two receivers unknown to the directory whose names differ only in characters outside A-Za-z0-9._- (any
 * two Cyrillic names of the same length) once got the same statement file name, and the second statement
 * overwrote the first (found in review).
 */

const TZ = 'Europe/Kyiv';
const POS = 'pos-s';
let db: TestDatabase;
let store: EventStore;
let deps: RunnerDeps;
const out = mkdtempSync(path.join(tmpdir(), 'recon-review-statements-'));

function row(paymentId: string, receiver: string, amount: bigint): NormalizedRegisterRecord {
  return {
    projectId: POS, orderId: `order-${paymentId}`, paymentId, method: 'purchase', status: 'success', dateTime: '2025-01-10T10:00:00.000Z', currency: 'UAH',
    amount: null, originalAmount: String(amount), customerFee: '0', merchantFee: '0', receiverName: receiver, receiverAmount: String(amount),
    receiverFee: '0', reserveAmount: '0', cardMask: null, payway: 'card', other: {},
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  deps = { sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, projections: [journal] };
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

describe('statements of receivers unknown to the directory', () => {
  it('two unknown receivers never share a statement file', async () => {
    for (const [pid, name, amount] of [['p-kafe', 'Кафе', 1_000n], ['p-salo', 'Сало', 2_000n]] as const) {
      const r = row(pid, name, amount);
      const k = registerObserved(POS, JSON.stringify(r), r, { source: 'register', reportId: 'rep', window: { from: '2025-01-01', to: '2025-01-31' }, observedAt: '2025-02-01T00:00:00.000Z' });
      await store.append(k.stream, [k.event]);
    }
    await waitVisible(db.sql, store);
    await runProjections(deps);
    const r = await issueStatements({ sql: db.sql, store, log: silentLogger, timezone: TZ }, { month: '2025-01', outDir: out });
    expect(r.statements).toBe(2);
    const statementFiles = r.files.filter((f) => f.subMerchantId !== undefined);
    // one file per statement, each still holding its own sub-merchant
    const onDisk = readdirSync(out).filter((f) => f.endsWith('.xlsx') && !f.startsWith('payouts-'));
    const ids: string[] = [];
    for (const f of onDisk) {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(path.join(out, f));
      ids.push(String(wb.getWorksheet('Summary')!.getCell('B2').value));
    }
    expect({ names: new Set(statementFiles.map((f) => f.name)).size, filesOnDisk: onDisk.length, idsOnDisk: ids.sort() })
      .toEqual({ names: 2, filesOnDisk: 2, idsOnDisk: ['receiver:Кафе', 'receiver:Сало'] });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { syncRange, type SyncDeps, type SyncReport } from '../../src/ingest/sync';
import { operationsOf } from '../../src/reconciliation/discrepancy-queries';
import { explain } from '../../src/reconciliation/explain';
import { statementFigures } from '../../src/ledger/ledger-queries';
import { runProjections } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import { createPspClient, type PspClient } from '../../src/psp/client';
import type { Operation } from '../../src/sandbox/model';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { sandboxSyncDeps } from '../support/sync-deps';
import { waitVisible } from '../ledger/visible';

/**
 * A row the PSP shows as success, then pending (or failure), then success again: the third observation is
 * byte-identical to the first, so its content id is one the store already holds. Through the real sync
 * against the sandbox, the PSP's answer rewritten for one payment in the middle run.
 */

const RANGE = { from: '2025-01-01', to: '2025-02-01' };
const TZ = 'UTC';

let sandbox: Sandbox;
let db: TestDatabase;
let store: EventStore;
/** payment streams read back by the sync (readStream), counted */
let paymentReads = 0;
/** rewrites of the PSP's record texts for the next sync (none: the PSP's real answer) */
let rewrite: { register?: (text: string) => string; period?: (text: string) => string } = {};

async function* mapped(records: AsyncIterable<string>, f: (text: string) => string): AsyncGenerator<string> {
  for await (const text of records) yield f(text);
}

function clientFor(p: PspProject): PspClient {
  const real = createPspClient(p, { timeoutMs: 5_000, retryBaseMs: 5, retryMaxMs: 20 });
  return {
    ...real,
    async fetchRegisterReport(id) {
      const r = await real.fetchRegisterReport(id);
      const f = rewrite.register;
      return r.ready && f ? { ready: true, records: mapped(r.records, f) } : r;
    },
    periodTransactions(from, to) {
      const f = rewrite.period;
      return f ? mapped(real.periodTransactions(from, to), f) : real.periodTransactions(from, to);
    },
  };
}

/** The status of one payment's `method` records, as the PSP would show another one. */
const showing = (op: Operation, from: string, to: string) => (text: string) =>
  text.includes(`"paymentId":${JSON.stringify(op.paymentId)}`) && text.includes(`"method":${JSON.stringify(op.method)}`)
    ? text.replace(`"status":${JSON.stringify(from)}`, `"status":${JSON.stringify(to)}`)
    : text;

function deps(): SyncDeps {
  return sandboxSyncDeps(db, sandbox, { pollMaxMs: 20, client: {} }, { store, clientFor });
}

const sync = (): Promise<SyncReport> => syncRange(deps(), RANGE);

async function project(): Promise<void> {
  await waitVisible(db.sql, store);
  await runProjections({
    sql: db.sql,
    store,
    log: silentLogger,
    timezone: TZ,
    graceHours: 48,
    projections: [journal, reconciliation],
  });
}

const january = async () => (await statementFigures(db.sql, { month: '2025-01', timezone: TZ })).map((f) => ({ ...f }));

async function observations(op: Operation, type: 'RegisterRecordObserved' | 'PeriodRecordObserved') {
  return db.sql<{ id: string; status: string; supersedes: string | null }[]>`
    select event_id::text as id, data->'record'->>'status' as status, data->>'supersedes' as supersedes
    from es_events where stream_id = ${`payment-${op.posId}-${op.paymentId}`} and type = ${type}
      and data->'record'->>'method' = ${op.method}
    order by stream_revision`;
}

let registerTarget: Operation;
let periodTarget: Operation;

beforeAll(async () => {
  sandbox = await startSandbox({ scenario: { seed: 'flip-back', month: '2025-01', timezone: TZ, payments: 80 } });
  db = await createTestDatabase();
  const real = createPostgresEventStore(db.sql);
  store = {
    ...real,
    readStream(stream, opts) {
      if (stream.startsWith('payment-')) paymentReads++;
      return real.readStream(stream, opts);
    },
  };
  const plain = [
    ...sandbox.scenario.operations({
      from: Date.parse('2025-01-01T00:00:00Z'),
      to: Date.parse('2025-02-01T00:00:00Z'),
    }),
  ].filter(
    (op) => op.method === 'purchase' && op.status === 'success' && op.distortion === null && !op.blankPeriodDateTime,
  );
  registerTarget = plain.find((op) => op.receivers.length > 0)!;
  periodTarget = plain.find((op) => op !== registerTarget && op.paymentId !== registerTarget.paymentId)!;
  expect(registerTarget).toBeDefined();
  expect(periodTarget).toBeDefined();
});
afterAll(async () => {
  await sandbox?.close();
  await db?.drop();
});

describe('a row that returns to an earlier content is observed again', () => {
  it('the first sync into an empty store reads no payment stream back', async () => {
    const first = await sync();
    expect(first.completed).toBe(1);
    expect(first.appended).toBeGreaterThan(100);
    expect(paymentReads).toBe(0);
  });

  it('a plain re-run of unchanged data appends nothing, in-report duplicate rows included', async () => {
    // the scenario lists one receiver's row twice with different card data (the `duplicate` discrepancy)
    expect(sandbox.scenario.groundTruth.some((g) => g.type === 'duplicate')).toBe(true);
    const again = await sync();
    expect(again.completed).toBe(1);
    expect(again.appended).toBe(0);
    expect(paymentReads).toBeGreaterThan(0);
  });

  it("a register row seen success → pending → success is appended a third time, superseding the pending one, and January's statement books the sale again", async () => {
    await project();
    const paid = await january();
    const rows = registerTarget.receivers.length;

    rewrite = { register: showing(registerTarget, 'success', 'pending') };
    const pending = await sync();
    expect(pending.appended).toBe(rows);
    await project();
    expect(await january()).not.toEqual(paid);

    rewrite = {};
    const back = await sync();
    expect(back.appended).toBe(rows);
    const seen = await observations(registerTarget, 'RegisterRecordObserved');
    expect(seen.map((o) => o.status)).toEqual([
      ...Array(rows).fill('success'),
      ...Array(rows).fill('pending'),
      ...Array(rows).fill('success'),
    ]);
    // each re-observation names the pending observation of its row (one per receiver)
    const pendingIds = new Set(seen.filter((o) => o.status === 'pending').map((o) => o.id));
    expect(seen.slice(2 * rows).map((o) => pendingIds.has(o.supersedes!))).toEqual(Array(rows).fill(true));
    expect(new Set(seen.slice(2 * rows).map((o) => o.supersedes)).size).toBe(rows);
    await project();
    expect(await january()).toEqual(paid);
  });

  it('a period record seen success → failure → success is appended a third time and the operations view shows success; recon explain shows what it supersedes', async () => {
    rewrite = { period: showing(periodTarget, 'success', 'failure') };
    expect((await sync()).appended).toBe(1);
    await project();
    const statusNow = async () => {
      const r = await operationsOf(db.sql, { paymentId: periodTarget.paymentId });
      if (!r.ok) throw new Error(r.message);
      return r.value.operations.filter((o) => o.method === 'purchase').map((o) => [o.register_status, o.period_status]);
    };
    expect(await statusNow()).toEqual([['success', 'failure']]);

    rewrite = {};
    expect((await sync()).appended).toBe(1);
    const seen = await observations(periodTarget, 'PeriodRecordObserved');
    expect(seen.map((o) => o.status)).toEqual(['success', 'failure', 'success']);
    expect(seen[2]!.supersedes).toBe(seen[1]!.id);
    await project();
    expect(await statusNow()).toEqual([['success', 'success']]);

    const x = await explain({ sql: db.sql, store, posIds: [periodTarget.posId] }, periodTarget.paymentId);
    const reobserved = x.events.find((e) => e.id === seen[2]!.id)!;
    expect(reobserved.summary).toContain(`supersedes ${seen[1]!.id}`);
  });

  it('re-running the sync after the flip-backs appends nothing', async () => {
    const again = await sync();
    expect(again.completed).toBe(1);
    expect(again.appended).toBe(0);
  });
});

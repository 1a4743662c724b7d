import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../../src/store/errors';
import { createPostgresEventStore } from '../../src/store/postgres';
import { advanceTransactionCounter, readTransactionCounter, storeReadiness } from '../../src/store/transaction-counter';
import type { EventStore, Position } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { storeEventAheadOfCounter } from '../support/logical-restore';
import { withTransactionCounterLock } from '../support/xid-lock';
import { batchesOf } from './contract-bulk';
import { ev } from './contract';
import { contentHash } from '../../src/store/prepare';
import { loadProjections } from '../../src/projector/runner';

/**
 * A database restored from a logical dump into another server keeps its events' transaction ids, while
 * that server's counter may be far below them (docs/store.md, "Backups and restores"). Simulated here by
 * storing an event whose transaction id is ahead of the counter, as such a restore leaves it. Without the
 * guard of migration 0600 the next append would sort before it and a reader at its position would never
 * see the new event.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

async function count(db: TestDatabase): Promise<number> {
  const [r] = await db.sql<{ n: number }[]>`select count(*)::int as n from es_events`;
  return r!.n;
}

describe('postgres event store: a transaction counter behind the stored events (logical restore)', () => {
  let db: TestDatabase;
  let store: EventStore;
  let restoredAt: Position;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    await store.append('before', [ev('before', 0)]);
    expect((await readTransactionCounter(db.sql)).ok).toBe(true);
    restoredAt = await storeEventAheadOfCounter(db);
  });
  afterAll(async () => db.drop());

  it('is seen: the last commit and the next transaction id are reported', async () => {
    const c = await readTransactionCounter(db.sql);
    expect(c.ok).toBe(false);
    expect(c.lastCommit).toBe(restoredAt.commit);
    expect(c.nextTransaction).toBeLessThanOrEqual(restoredAt.commit);
  });

  it('every append path is refused with TRANSACTION_COUNTER_BEHIND, and nothing is written', async () => {
    const n = await count(db);
    const attempts = [
      // ingestion's single-statement path (es_append_any)
      () =>
        store.appendMany([
          { stream: 'new-a', events: [ev('new-a', 0)] },
          { stream: 'new-b', events: [ev('new-b', 0)] },
        ]),
      // the transaction path (an expected revision)
      () => store.append('new-c', [ev('new-c', 0)], { expectedRevision: 'no_stream' }),
      // the bulk append
      () => store.appendBulk(batchesOf([{ stream: 'new-d', event: ev('new-d', 0) }])),
    ];
    for (const attempt of attempts) {
      const err = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isStoreError(err, 'TRANSACTION_COUNTER_BEHIND'), String(err)).toBe(true);
      expect((err as Error).message).toMatch(/not below this server's next transaction id.*recon store advance-xid/s);
    }
    expect(await count(db)).toBe(n);
    const [s] = await db.sql<{ n: number }[]>`select count(*)::int as n from es_streams where stream_id like 'new-%'`;
    expect(s!.n).toBe(0);
  });

  it('a receiver is not ready (a load balancer routes webhooks elsewhere) until the counter is advanced', async () => {
    await expect(storeReadiness(store, db.sql)()).rejects.toSatisfy((e) =>
      isStoreError(e, 'TRANSACTION_COUNTER_BEHIND'),
    );
  });

  it('readers are held back below the counter (they skip nothing: the restored event waits, it is not passed)', async () => {
    const page = await store.readAll(undefined, { maxCount: 10 });
    expect(page.map((e) => e.stream)).toEqual(['before']);
    expect(await store.headPosition()).toEqual(page[0]!.position);
    // a stream is read by its revisions, not by position
    expect((await store.readStream('restored')).map((e) => e.revision)).toEqual([0]);
  });

  it("the procedure is the owner's only", async () => {
    const [f] = await db.sql<{ pub: boolean }[]>`
      select has_function_privilege('public', 'es_advance_transaction_counter(xid8)', 'execute') as pub`;
    expect(f!.pub).toBe(false);
  });
});

describe('postgres event store: advancing the counter past restored events', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db.drop());

  it('after advancing the counter, appends work and sort after the restored events, where a reader at their position finds them', async () => {
    const store = createPostgresEventStore(db.sql);
    await store.append('before', [ev('before', 0)]);
    // a gap small enough to advance past in a second; nothing else moves the shared counter meanwhile
    await withTransactionCounterLock(async () => {
      const restoredAt = await storeEventAheadOfCounter(db, 150_000n);
      const steps: bigint[] = [];
      const { before, after } = await advanceTransactionCounter(db.sql, {
        step: 50_000,
        onProgress: (p) => steps.push(p.next),
      });
      expect(before.ok).toBe(false);
      expect(after.ok).toBe(true);
      expect(after.nextTransaction).toBeGreaterThan(restoredAt.commit);
      expect(steps.length).toBeGreaterThanOrEqual(2); // in steps, with progress
      await expect(storeReadiness(store, db.sql)()).resolves.toBeUndefined();
      const [r] = await store.appendMany([{ stream: 'new-a', events: [ev('new-a', 0)] }]);
      expect(r!.position!.commit).toBeGreaterThan(restoredAt.commit);
      const page = await store.readAll(restoredAt, { maxCount: 10 });
      expect(page.map((e) => e.stream)).toEqual(['new-a']);
      expect((await store.readAll(undefined, { maxCount: 10 })).map((e) => e.stream)).toEqual([
        'before',
        'restored',
        'new-a',
      ]);
      // nothing left to do the second time
      const again = await advanceTransactionCounter(db.sql);
      expect(again.after.nextTransaction - again.before.nextTransaction).toBeLessThan(10n);
    });
  });
});

describe('postgres event store: the counter check on a healthy server', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ max: 16 });
  });
  afterAll(async () => db.drop());

  it('never refuses an append while other transactions commit events around it', async () => {
    // The check must read the last commit and the next transaction id in one snapshot: read in two, an
    // append committed in between by a later transaction looked like a restore (seen once in this suite).
    const store = createPostgresEventStore(db.sql);
    const writers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = 0; i < 40; i++) {
        if (i % 2) await store.append(`w-${w}`, [ev(`w-${w}`, i)]);
        else
          await store.appendMany([
            { stream: `w-${w}`, events: [ev(`w-${w}`, i)] },
            { stream: `x-${w}`, events: [ev(`x-${w}`, i)] },
          ]);
      }
    });
    const results = await Promise.allSettled(writers);
    expect(
      results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)),
    ).toEqual([]);
    expect(await count(db)).toBe(16 * 40 + 16 * 20);
  });

  it('does not refuse a second insert of one transaction (its own first event is not a restored one)', async () => {
    // A snapshot's xmax is one past the latest completed transaction: this transaction's own first event is at
    // or above it, and the guard of migration 0600 took it for a restored one (1000 fixes it).
    const before = await count(db);
    await db.sql.begin(async (tx) => {
      for (const n of [1, 2, 3]) {
        const e = ev('one-tx', n);
        await tx`insert into es_events (event_id, stream_id, stream_revision, type, version, data, content_hash)
                 values (${e.id}, 'one-tx', ${n - 1}, ${e.type}, 1, ${tx.json(e.data as never)}, ${contentHash(e)})`;
      }
    });
    expect(await count(db)).toBe(before + 3);
  });
});

describe('recon store check / advance-xid (CLI)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await createPostgresEventStore(db.sql).append('before', [ev('before', 0)]);
  });
  afterAll(async () => db.drop());

  const run = (args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), ...args], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_URL: db.url,
        RECON_LOG_LEVEL: 'warn',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('check says whether appends are accepted (exit 1 when not), every command warns, advance-xid repairs it once', async () => {
    const healthy = run(['store', 'check']);
    expect(healthy.status).toBe(0);
    expect(healthy.stdout).toMatch(/appends accepted\nread models: none built yet\n$/);

    await withTransactionCounterLock(async () => {
      await storeEventAheadOfCounter(db, 150_000n);
      const behind = run(['store', 'check']);
      expect(behind.status).toBe(1);
      expect(behind.stdout).toMatch(/appends REFUSED: the counter is [\d,]+ behind \(run recon store advance-xid\)/);
      expect(behind.stderr).toMatch(/"level":"warn".*refuses appends.*recon store advance-xid/);

      const advanced = run(['store', 'advance-xid']);
      expect(advanced.status, advanced.stderr).toBe(0);
      expect(advanced.stdout).toMatch(/advanced by [\d,]+ transaction ids .*\n.*\n.*\nappends accepted/);
      expect((await readTransactionCounter(db.sql)).ok).toBe(true);
    });

    const again = run(['store', 'advance-xid']);
    expect(again.stdout).toMatch(/^nothing to do:/);
    expect(again.stderr).toBe('');
  });

  it('check says which read models are not on this store (a store restored older and appended to since), exit 1', async () => {
    const built = run(['project']);
    expect(built.status, built.stderr).toBe(0);
    const ok = run(['store', 'check']);
    expect(ok.status, ok.stdout).toBe(0);
    // every read model of projections/, by name, each on this store
    const names = (await loadProjections()).map((p) => p.name).sort();
    expect(names).toContain('journal');
    const line = (n: string) => ` {2}${n} \\(rm_${n}_v\\d+_b1, live\\) at \\d+\\/\\d+: on this store\\n`;
    expect(ok.stdout).toMatch(new RegExp(`read models:\\n${names.map(line).join('')}$`));

    // the journal's checkpoint now holds another event than the one it applied last
    await db.sql`update projection_builds set checkpoint_event_id = ${crypto.randomUUID()}::uuid where name = 'journal'`;
    const off = run(['store', 'check']);
    expect(off.status).toBe(1);
    expect(off.stdout).toMatch(
      / {2}journal \(rm_journal_v\d+_b1, live\) at \d+\/\d+: NOT ON THIS STORE: projection journal .* but the event store holds event [0-9a-f-]+ there: .*\n( {2}\w+ .*: on this store\n)+rebuild the read models not on this store: recon project --rebuild\n$/,
    );
  });
});

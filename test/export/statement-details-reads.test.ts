import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../src/db/connect';
import { fileSha256, issueStatements } from '../../src/export/statements/issue';
import { statementLines } from '../../src/ledger/ledger-queries';
import { silentLogger } from '../../src/log';
import { loadProjections, runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import { parsePosition, type EventStore } from '../../src/store/types';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * A statement's line details (how the customer paid, the fee's parts) are read a batch of lines at a time,
 * once for the three passes over the lines (Operations, Audit, PDF): the reads a statement makes depend on
 * its lines only through the batch size, and the files do not depend on it at all.
 */

const TZ = 'Europe/Kyiv';
const MONTH = '2025-01';
let db: TestDatabase;
let store: EventStore;
const out = mkdtempSync(path.join(tmpdir(), 'recon-statement-reads-'));

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const journal = (await loadProjections()).filter((p) => p.name === 'journal');
  const scenario = scenarioFor({ seed: 2611, payments: 160, month: MONTH, timezone: TZ, subMerchants: 4 });
  for (const c of appendChunks(scenarioEvents(scenario), 200)) await store.appendMany(c);
  await runProjections({ sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, projections: journal });
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

interface Reads {
  /** queries for the POS ids of a batch of payments */
  posQueries: number;
  /** reads of many payment streams in one call */
  batchReads: number;
  /** reads of one payment stream */
  streamReads: number;
}

/** The store and the SQL pool, counting the reads of the payments' details. */
function counting(): { reads: Reads; store: EventStore; sql: Sql } {
  const reads: Reads = { posQueries: 0, batchReads: 0, streamReads: 0 };
  const counted: EventStore = {
    ...store,
    readStream: (stream, o) => {
      if (stream.startsWith('payment-')) reads.streamReads++;
      return store.readStream(stream, o);
    },
    readStreams: (streams, o) => {
      reads.batchReads++;
      return store.readStreams!(streams, o);
    },
  };
  const sql = new Proxy(db.sql, {
    apply(target, self, args: unknown[]) {
      const text = Array.isArray(args[0]) ? (args[0] as string[]).join('?') : '';
      if (/from recon\.journal_entries where payment_id/.test(text)) reads.posQueries++;
      return Reflect.apply(target, self, args);
    },
  });
  return { reads, store: counted, sql };
}

async function issue(batch: number) {
  const c = counting();
  const dir = path.join(out, `batch-${batch}`);
  const r = await issueStatements(
    { sql: c.sql, store: c.store, log: silentLogger, timezone: TZ, linesPerDetailRead: batch },
    { month: MONTH, outDir: dir, now: new Date('2025-03-01T00:00:00Z') },
  );
  const hashes = new Map<string, string>();
  for (const f of readdirSync(dir).sort()) hashes.set(f, await fileSha256(path.join(dir, f)));
  return { r, reads: c.reads, hashes };
}

/** The statement's lines per sub-merchant and currency, as the ledger gives them at the cut. */
async function lineCounts(position: string, figures: ReadonlyArray<{ subMerchantId: string; currency: string }>) {
  const counts: number[] = [];
  for (const f of figures) {
    let n = 0;
    for await (const _ of statementLines(db.sql, {
      month: MONTH,
      timezone: TZ,
      subMerchantId: f.subMerchantId,
      currency: f.currency,
      atPosition: parsePosition(position),
    }))
      n++;
    counts.push(n);
  }
  return counts;
}

describe('statement line details, read in batches', () => {
  it('reads each batch of lines once, in two reads, for the three passes; the files are the same at any batch size', async () => {
    const big = await issue(100_000);
    const counts = await lineCounts(big.r.position, big.r.figures);
    const lines = counts.reduce((a, b) => a + b, 0);
    expect(lines).toBe(big.r.lines);
    expect(lines).toBeGreaterThan(100);
    // one batch per sub-merchant and currency with lines: as many reads for 10 lines as for 100,000
    const statementsWithLines = counts.filter((n) => n > 0).length;
    expect(big.reads).toEqual({ posQueries: statementsWithLines, batchReads: statementsWithLines, streamReads: 0 });

    for (const batch of [7, 25]) {
      const small = await issue(batch);
      const batches = counts.reduce((a, n) => a + Math.ceil(n / batch), 0);
      // ⌈lines / batch⌉ per statement and currency, not three passes over them, and never one read a line
      expect(small.reads).toEqual({ posQueries: batches, batchReads: batches, streamReads: 0 });
      expect(batches).toBeLessThan(lines / 3);
      // byte for byte the same workbooks and PDFs
      expect(small.r.figuresSha256).toBe(big.r.figuresSha256);
      expect([...small.hashes]).toEqual([...big.hashes]);
    }
    expect(big.hashes.size).toBeGreaterThan(4);
  });

  it('reads stream by stream, a few at a time, from a store that cannot read many at once', async () => {
    const c = counting();
    const { readStreams: _, ...noBatchReads } = c.store;
    const dir = path.join(out, 'stream-by-stream');
    const r = await issueStatements(
      { sql: c.sql, store: noBatchReads, log: silentLogger, timezone: TZ, linesPerDetailRead: 25 },
      { month: MONTH, outDir: dir, now: new Date('2025-03-01T00:00:00Z') },
    );
    const reference = await issue(25);
    expect(c.reads.batchReads).toBe(0);
    expect(c.reads.streamReads).toBeGreaterThan(0);
    expect(c.reads.posQueries).toBe(reference.reads.posQueries);
    for (const [name, sha] of reference.hashes) expect(await fileSha256(path.join(dir, name))).toBe(sha);
    expect(r.lines).toBe(reference.r.lines);
  });
});

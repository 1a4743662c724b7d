import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSha256, type IssueResult, issueStatements, statementRuns } from '../../src/export/statements/issue';
import { createLogger, type Logger, silentLogger } from '../../src/log';
import { loadProjections, runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { listOutput } from '../faults/support/workbooks';

/**
 * Statements of different sub-merchants written on worker threads (statement-pool.ts): the same bytes as in
 * the run's own thread, listed in the same order; a statement that cannot be written ends the run with its
 * error and no partial file; an abort stops the workers and leaves none either.
 */

const TZ = 'Europe/Kyiv';
const MONTH = '2025-01';
const NOW = new Date('2025-03-01T00:00:00Z');
let db: TestDatabase;
let store: EventStore;
const out = mkdtempSync(path.join(tmpdir(), 'recon-statement-pool-'));

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const journal = (await loadProjections()).filter((p) => p.name === 'journal');
  const scenario = scenarioFor({ seed: 2612, payments: 240, month: MONTH, timezone: TZ, subMerchants: 5 });
  for (const c of appendChunks(scenarioEvents(scenario), 200)) await store.appendMany(c);
  await runProjections({ sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, projections: journal });
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

/** A logger keeping what the run said of its worker threads. */
function threadsLogged(): { log: Logger; threads: () => unknown } {
  const lines: string[] = [];
  const log = createLogger({ level: 'info', write: (l) => lines.push(l) });
  return {
    log,
    threads: () =>
      lines
        .map((l) => JSON.parse(l) as { msg: string; workerThreads?: number })
        .find((l) => l.msg === 'writing statements')?.workerThreads,
  };
}

function issue(
  dir: string,
  workers: { count: number; fromLines?: number },
  o: { log?: Logger; signal?: AbortSignal; onProgress?: () => void } = {},
): Promise<IssueResult> {
  return issueStatements(
    { sql: db.sql, store, log: o.log ?? silentLogger, timezone: TZ, linesPerDetailRead: 40, workers },
    {
      month: MONTH,
      outDir: path.join(out, dir),
      now: NOW,
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
    },
  );
}

let reference: IssueResult;

describe('statements written on worker threads', () => {
  it('are byte for byte those written in the run’s own thread, listed in the same order', async () => {
    const one = threadsLogged();
    reference = await issue('one-thread', { count: 1 }, { log: one.log });
    const pool = threadsLogged();
    const pooled = await issue('pool', { count: 3, fromLines: 0 }, { log: pool.log });
    expect(one.threads()).toBe(0);
    expect(pool.threads()).toBe(3);

    expect(reference.statements).toBeGreaterThanOrEqual(4);
    expect(pooled.lines).toBe(reference.lines);
    expect(pooled.lines).toBeGreaterThan(300);
    const described = (r: IssueResult) => r.files.map((f) => [f.name, f.sha256, f.bytes, f.subMerchantId]);
    expect(described(pooled)).toEqual(described(reference));
    for (const f of reference.files) expect(await fileSha256(path.join(out, 'pool', f.name)), f.name).toBe(f.sha256);
    expect(listOutput(path.join(out, 'pool')).partials).toEqual([]);
    // the second run reproduced the first (same cut, same figures): one run recorded
    expect(await statementRuns(db.sql, { month: MONTH })).toHaveLength(1);
  }, 300_000);

  it('ends the run with the error of a statement a worker could not write, and leaves no partial file', async () => {
    const dir = path.join(out, 'failing');
    // the third sub-merchant's PDF cannot take its final name: a directory is there
    const pdfs = reference.files.filter((f) => f.name.endsWith('.pdf'));
    const blocked = pdfs[2]!.name;
    mkdirSync(path.join(dir, blocked, 'occupied'), { recursive: true });

    await expect(issue('failing', { count: 2, fromLines: 0 })).rejects.toThrow(
      new RegExp(`EISDIR.*${blocked.replace(/\./g, '\\.')}`),
    );
    const left = listOutput(dir);
    expect(left.partials).toEqual([]);
    expect(statSync(path.join(dir, blocked)).isDirectory()).toBe(true);
    // whatever is under a final name is whole: the statement as the uninterrupted run wrote it
    const finals = left.finals.filter((n) => n !== blocked);
    expect(finals.length).toBeGreaterThan(0);
    expect(finals).not.toContain(`payouts-${MONTH}.xlsx`); // the index is written last
    const sha = new Map(reference.files.map((f) => [f.name, f.sha256]));
    for (const name of finals) expect(await fileSha256(path.join(dir, name)), name).toBe(sha.get(name));
    expect(await statementRuns(db.sql, { month: MONTH })).toHaveLength(1);
  }, 240_000);

  it('stops its workers on an abort, leaving no partial file', async () => {
    const dir = path.join(out, 'aborted');
    const abort = new AbortController();
    const reason = new Error('stopped by the operator');
    await expect(
      issue('aborted', { count: 2, fromLines: 0 }, { signal: abort.signal, onProgress: () => abort.abort(reason) }),
    ).rejects.toBe(reason);
    const left = listOutput(dir);
    expect(left.partials).toEqual([]);
    expect(left.finals.length).toBeLessThan(reference.files.length);
    const sha = new Map(reference.files.map((f) => [f.name, f.sha256]));
    for (const name of left.finals) expect(await fileSha256(path.join(dir, name)), name).toBe(sha.get(name));
    expect(await statementRuns(db.sql, { month: MONTH })).toHaveLength(1);
  }, 240_000);
});

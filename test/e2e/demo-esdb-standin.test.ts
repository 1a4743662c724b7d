import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateScenario } from '../../src/sandbox/scenario';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { startEsdbStandin, type EsdbStandin } from '../support/esdb-standin/server';

/**
 * `recon demo` end to end with its events in the EventStoreDB backend, against the gRPC stand-in
 * (test/support/esdb-standin: a test double serving the client's service definitions, not EventStoreDB),
 * and once with its events in PostgreSQL: the same statements, figures and discrepancies on both.
 */
const SEED = 'e2e-demo-esdb';
const MONTH = '2025-03';
const ZONE = 'Europe/Kyiv';
const PAYMENTS = 30;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}
interface Summary {
  statements: { files: string[]; figuresSha256: string };
  discrepancies: Record<string, number>;
}

function runDemo(env: NodeJS.ProcessEnv, out: string): Promise<Run> {
  const args = ['bin/recon.mjs', 'demo', '--seed', SEED, '--payments', String(PAYMENTS), '--month', MONTH];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args, '--out', out, '--json'], {
      cwd: path.resolve(__dirname, '../..'),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function summaryOf(run: Run): Summary {
  try {
    return JSON.parse(run.stdout) as Summary;
  } catch {
    throw new Error(`demo printed no JSON summary (exit ${run.code}):\n${run.stderr.slice(-3000)}`);
  }
}

describe('recon demo on the EventStoreDB backend (gRPC stand-in), end to end', () => {
  let standin: EsdbStandin;
  let esdbDb: TestDatabase;
  let pgDb: TestDatabase;
  let dir: string;
  const runs: { esdb: Run[]; pg: Run[] } = { esdb: [], pg: [] };
  const scenario = generateScenario({ seed: SEED, payments: PAYMENTS, month: MONTH, timezone: ZONE });

  beforeAll(async () => {
    standin = await startEsdbStandin();
    esdbDb = await createTestDatabase({ migrate: false });
    pgDb = await createTestDatabase({ migrate: false });
    dir = mkdtempSync(path.join(tmpdir(), 'recon-demo-esdb-'));
    const env = (db: TestDatabase, sub: string, eventStoreUrl?: string): NodeJS.ProcessEnv => {
      const e: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: db.url,
        RECON_DATA_DIR: path.join(dir, sub),
        RECON_TIMEZONE: ZONE,
      };
      for (const k of Object.keys(e)) if (k.startsWith('PSP_') || k === 'EVENTSTORE_URL') delete e[k];
      if (eventStoreUrl) e.EVENTSTORE_URL = eventStoreUrl;
      return e;
    };
    const esdbEnv = env(esdbDb, 'esdb', standin.url);
    const [pg, esdb] = await Promise.all([
      runDemo(env(pgDb, 'pg'), path.join(dir, 'pg-out')),
      runDemo(esdbEnv, path.join(dir, 'esdb-out')),
    ]);
    runs.pg.push(pg);
    runs.esdb.push(esdb, await runDemo(esdbEnv, path.join(dir, 'esdb-out')));
  }, 300_000);

  afterAll(async () => {
    await standin?.stop();
    await esdbDb?.drop();
    await pgDb?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs to completion twice, with its events in the stand-in', () => {
    for (const r of [...runs.esdb, ...runs.pg]) expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(standin.stats.appends).toBeGreaterThan(PAYMENTS);
  });

  it('gives the figures and discrepancies of the PostgreSQL backend, and a second run changes none', () => {
    const [first, second] = runs.esdb.map(summaryOf);
    const pg = summaryOf(runs.pg[0]!);
    expect(first!.statements.figuresSha256).toBe(pg.statements.figuresSha256);
    expect(second!.statements.figuresSha256).toBe(first!.statements.figuresSha256);
    expect(second!.discrepancies).toEqual(first!.discrepancies);
  });

  it('finds exactly the discrepancies the sandbox injected, as the PostgreSQL backend does', async () => {
    const open = async (db: TestDatabase) =>
      (
        await db.sql<{ type: string; payment_id: string | null }[]>`
          select type, payment_id from recon.discrepancies where status in ('open', 'accepted')`
      )
        .map((r) => `${r.type} ${r.payment_id ?? ''}`)
        .sort();
    const expected = scenario.groundTruth
      .filter((g) => g.type !== 'missing_webhook' || (g.detail as { lostForGood?: boolean }).lostForGood)
      .map((g) => `${g.type} ${g.type === 'report_count_mismatch' ? '' : g.paymentId}`)
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(await open(esdbDb)).toEqual(expected);
    expect(await open(pgDb)).toEqual(expected);
    // the events are in the stand-in, not in PostgreSQL
    const [n] = await esdbDb.sql<{ n: number }[]>`select count(*)::int as n from es_events`;
    expect(n!.n).toBe(0);
  });
});

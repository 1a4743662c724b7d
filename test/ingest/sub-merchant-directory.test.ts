import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nightlyReconciliationJob } from '../../jobs/nightly-reconciliation';
import { loadConfig } from '../../src/config/env';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import { type TestDatabase, useTestDatabases } from '../support/db';

/**
 * RECON_SUB_MERCHANTS in force: every command that judges imports it first (one shared step), idempotently; a
 * changed file is a new version; a malformed one is refused naming file, line and column with nothing applied;
 * `recon config` shows it.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const freshDb = useTestDatabases();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function directory(files: Record<string, string>): string {
  const d = mkdtempSync(path.join(tmpdir(), 'recon-sub-merchants-'));
  dirs.push(d);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(d, name), text);
  return d;
}

const A = 'sub_merchant_id,name,reserve_hold_days\nsm-1,Acme Books,30\nsm-2,Blue Cafe,\n';
const B = 'sub_merchant_id,name,reserve_hold_days\nsm-3,Corner Shop,60\n';

function recon(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RECON_LOG_LEVEL: 'error', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

async function directoryEvents(db: TestDatabase) {
  return db.sql<{ stream: string; name: string; hold: number }[]>`
    select stream_id as stream, data->>'name' as name, (data->>'reserveHoldDays')::int as hold
    from es_events where stream_id like 'sub-merchant-%' order by global_position`;
}

describe('RECON_SUB_MERCHANTS through the commands that judge', () => {
  it('is imported before the command runs; again nothing; a changed file is a new version', async () => {
    const db = await freshDb();
    const dir = directory({ 'a.csv': A, 'b.csv': B });
    const env = { DATABASE_URL: db.url, RECON_SUB_MERCHANTS: dir };

    const first = await recon(['statements', '--runs'], env);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect((await directoryEvents(db)).map((e) => [e.stream, e.name, e.hold])).toEqual([
      ['sub-merchant-sm-1', 'Acme Books', 30],
      ['sub-merchant-sm-2', 'Blue Cafe', 90],
      ['sub-merchant-sm-3', 'Corner Shop', 60],
    ]);

    const again = await recon(['project', '--status'], env);
    expect(again.code).toBe(0);
    expect(await directoryEvents(db)).toHaveLength(3);

    writeFileSync(path.join(dir, 'b.csv'), 'sub_merchant_id,name,reserve_hold_days\nsm-3,Corner Shop,45\n');
    const changed = await recon(['project', '--status'], env);
    expect(changed.code).toBe(0);
    const events = await directoryEvents(db);
    expect(events).toHaveLength(4);
    expect(events[3]).toEqual({ stream: 'sub-merchant-sm-3', name: 'Corner Shop', hold: 45 });
  }, 60_000);

  it('a malformed file is refused naming file, line and column, and nothing of the directory is applied', async () => {
    const db = await freshDb();
    // a.csv is valid and new; b.csv has a bad hold: neither is imported.
    const dir = directory({ 'a.csv': A, 'b.csv': 'sub_merchant_id,name,reserve_hold_days\nsm-3,Corner Shop,-5\n' });
    const r = await recon(['sync', '--incremental'], { DATABASE_URL: db.url, RECON_SUB_MERCHANTS: dir });
    expect(r.code).toBe(65);
    expect(r.out).toBe('');
    expect(r.err).toContain(`RECON_SUB_MERCHANTS=${dir}`);
    expect(r.err).toContain(`${path.join(dir, 'b.csv')}:2 (column reserve_hold_days)`);
    expect(await directoryEvents(db)).toEqual([]);
  }, 60_000);

  it('the nightly job imports it before projecting and judging, and says so in its counters', async () => {
    const db = await freshDb();
    const dir = directory({ 'a.csv': A });
    const out = mkdtempSync(path.join(tmpdir(), 'recon-sub-merchants-out-'));
    dirs.push(out);
    const r = loadConfig({ RECON_SUB_MERCHANTS: dir, RECON_OUT_DIR: out, RECON_TIMEZONE: 'UTC' });
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    const store = createPostgresEventStore(db.sql);
    const job = nightlyReconciliationJob({ config: r.config, sql: db.sql, store, log: silentLogger });
    const now = new Date('2025-02-01T03:00:00Z');
    const ctx = {
      scheduledFor: now,
      trigger: 'manual' as const,
      attempt: 1,
      signal: new AbortController().signal,
      log: silentLogger,
      now: () => now,
    };
    const counters = (await job.run(ctx)) ?? {};
    expect(counters['subMerchantDirectory']).toMatchObject({ path: dir, rows: 2, registered: 2 });
    // projected in the same run: the directory was in the store before the projections ran
    const rows = await db.sql`select sub_merchant_id, name from recon.sub_merchants order by 1`;
    expect(rows.map((x) => [x['sub_merchant_id'], x['name']])).toEqual([
      ['sm-1', 'Acme Books'],
      ['sm-2', 'Blue Cafe'],
    ]);
    const second = (await job.run(ctx)) ?? {};
    expect(second['subMerchantDirectory']).toMatchObject({ registered: 0 });
    expect(await directoryEvents(db)).toHaveLength(2);
  }, 60_000);
});

describe('RECON_SUB_MERCHANTS and the worker', () => {
  it('recon start imports it before it serves or judges anything', async () => {
    const db = await freshDb();
    const dir = directory({ 'a.csv': A });
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'bin/recon.mjs'), 'start', '--port', '0', '--no-scheduler', '--no-projections'],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          RECON_LOG_LEVEL: 'error',
          DATABASE_URL: db.url,
          RECON_SUB_MERCHANTS: dir,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    let events = await directoryEvents(db);
    for (let i = 0; i < 120 && events.length < 2 && child.exitCode === null; i++) {
      await new Promise((r) => setTimeout(r, 500));
      events = await directoryEvents(db);
    }
    child.kill('SIGTERM');
    expect(await exited, err).toBe(0);
    expect(events.map((e) => [e.stream, e.name, e.hold])).toEqual([
      ['sub-merchant-sm-1', 'Acme Books', 30],
      ['sub-merchant-sm-2', 'Blue Cafe', 90],
    ]);
  }, 90_000);
});

describe('recon config and RECON_SUB_MERCHANTS', () => {
  it('shows the path, the files, the rows and a version that changes with the content', async () => {
    const dir = directory({ 'a.csv': A, 'b.csv': B });
    const show = async () => {
      const r = await recon(['config'], { RECON_SUB_MERCHANTS: dir });
      expect(r.code).toBe(0);
      return (JSON.parse(r.out) as { subMerchantDirectory: Record<string, unknown> }).subMerchantDirectory;
    };
    const first = await show();
    expect(first).toMatchObject({ path: dir, files: 2, rows: 3 });
    expect(first['version']).toMatch(/^[0-9a-f]{12}$/);
    expect((await show())['version']).toBe(first['version']);
    writeFileSync(path.join(dir, 'b.csv'), 'sub_merchant_id,name,reserve_hold_days\nsm-3,Corner Shop,45\n');
    expect((await show())['version']).not.toBe(first['version']);
  }, 60_000);

  it('refuses a malformed directory with exit 65 (data), naming file, line and column', async () => {
    const dir = directory({ 'a.csv': 'sub_merchant_id,name,reserve_hold_days\nsm 1,Acme,30\n' });
    const r = await recon(['config'], { RECON_SUB_MERCHANTS: dir });
    expect(r.code).toBe(65);
    expect(r.out).toBe('');
    expect(r.err).toContain(`${path.join(dir, 'a.csv')}:2 (column sub_merchant_id)`);
  }, 60_000);
});

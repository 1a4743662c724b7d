import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate';
import { silentLogger } from '../../src/log';
import { createTestDatabase, type TestDatabase } from '../support/db';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
const databases: TestDatabase[] = [];

afterAll(async () => {
  for (const db of databases) await db.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase({ migrate: false });
  databases.push(db);
  return db;
}

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-migrations-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

async function recorded(db: TestDatabase): Promise<{ version: number; name: string; checksum: string }[]> {
  return db.sql<
    { version: number; name: string; checksum: string }[]
  >`select version, name, checksum from schema_migrations order by version`;
}

async function tableExists(db: TestDatabase, table: string): Promise<boolean> {
  const [row] = await db.sql<{ t: string | null }[]>`select to_regclass(${table})::text as t`;
  return row?.t !== null && row?.t !== undefined;
}

function reconMigrate(url: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'migrate'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: url, RECON_LOG_LEVEL: 'info' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('migrations', () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await freshDatabase();
  });

  it('applies every migration once, in order, records it, and does nothing the second time', async () => {
    const all = loadMigrations();
    expect(all.map((m) => m.version)).toEqual([...all.map((m) => m.version)].sort((a, b) => a - b));
    expect(all[0]).toMatchObject({ version: 1, name: 'event_store' });

    expect(await migrate(db.sql, silentLogger)).toEqual(all.map((m) => m.version));
    expect(await recorded(db)).toEqual(all.map((m) => ({ version: m.version, name: m.name, checksum: m.checksum })));
    expect(await tableExists(db, 'es_events')).toBe(true);

    expect(await migrate(db.sql, silentLogger)).toEqual([]);
    expect(await recorded(db)).toHaveLength(all.length);
  });

  it('is safe from two recon processes at once: both succeed, each migration is applied and recorded once', async () => {
    const all = loadMigrations();
    const runs = await Promise.all([reconMigrate(db.url), reconMigrate(db.url)]);
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`migrations: ${all.length} applied, latest ${all[all.length - 1]!.version}`);
    }
    expect((await recorded(db)).map((r) => r.version)).toEqual(all.map((m) => m.version));
    // The advisory lock made one wait for the other: together they applied each migration exactly once.
    const applied = runs
      .flatMap((r) => r.stderr.split('\n'))
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; version?: number })
      .filter((l) => l.msg === 'migration applied')
      .map((l) => l.version)
      .sort((a, b) => a! - b!);
    expect(applied).toEqual(all.map((m) => m.version));
  });

  it('refuses a migration that was changed after it was applied', async () => {
    const files = {
      '0001_first.sql': 'create table first_t (id int);',
      '0002_second.sql': 'create table second_t (id int);',
    };
    const dir = migrationsDir(files);
    expect(await migrate(db.sql, silentLogger, loadMigrations(dir))).toEqual([1, 2]);
    writeFileSync(path.join(dir, '0001_first.sql'), 'create table first_t (id bigint);');
    writeFileSync(path.join(dir, '0003_third.sql'), 'create table third_t (id int);');
    await expect(migrate(db.sql, silentLogger, loadMigrations(dir))).rejects.toThrow(
      'migration 1_first was changed after it was applied; add a new migration instead',
    );
    // Nothing after the refused one ran.
    expect(await tableExists(db, 'third_t')).toBe(false);
    expect((await recorded(db)).map((r) => r.version)).toEqual([1, 2]);
  });

  it('rolls a failing migration back on its own, keeping the ones before it, and applies it once fixed', async () => {
    const dir = migrationsDir({
      '0001_good.sql': 'create table good_t (id int); insert into good_t values (1);',
      '0002_bad.sql': 'create table bad_t (id int); insert into bad_t values (1); select 1 / 0;',
      '0003_later.sql': 'create table later_t (id int);',
    });
    await expect(migrate(db.sql, silentLogger, loadMigrations(dir))).rejects.toThrow(
      /^migration 2_bad failed: division by zero/,
    );
    expect((await recorded(db)).map((r) => r.version)).toEqual([1]);
    expect(await tableExists(db, 'good_t')).toBe(true);
    expect(await tableExists(db, 'bad_t')).toBe(false);
    expect(await tableExists(db, 'later_t')).toBe(false);

    writeFileSync(path.join(dir, '0002_bad.sql'), 'create table bad_t (id int); insert into bad_t values (1);');
    expect(await migrate(db.sql, silentLogger, loadMigrations(dir))).toEqual([2, 3]);
    expect(await tableExists(db, 'later_t')).toBe(true);
    const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from good_t`;
    expect(row!.n).toBe(1);
  });

  it('reads only NNNN_name.sql files, in version order', () => {
    const dir = migrationsDir({
      '0010_b.sql': 'select 1;',
      '0002_a.sql': 'select 2;',
      'README.md': '',
      '12_bad_name.sql': '',
      '0003_Upper.sql': '',
    });
    expect(loadMigrations(dir).map((m) => `${m.version}_${m.name}`)).toEqual(['2_a', '10_b']);
  });
});

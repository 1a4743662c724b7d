import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { subMerchant } from '../discrepancies/fixtures';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * Review 16: the directory refuses, within the files imported, two sub-merchants of one name, of names that print
 * alike, or of one statement file. A partial import (a file of new rows only) was checked against itself alone:
 * a new id could take the name, a look-alike name or the statement file of a sub-merchant already registered,
 * and the receiverName lookup, the statements and every later month's run broke. It is now refused naming the
 * file, the line and the registered sub-merchant, nothing imported; a re-import or a rename of a registered id
 * is taken.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-stored-'));
let db: TestDatabase;
let store: EventStore;
let env: NodeJS.ProcessEnv;
const HEADER = 'sub_merchant_id,name,reserve_hold_days\n';
const eventCount = async () => (await store.readAll()).length;

function csv(name: string, rows: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `${HEADER}${rows}`);
  return file;
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  env = reconEnv({ databaseUrl: db.url, extra: { RECON_LOG_LEVEL: 'error' } });
  const base = csv('base.csv', 'sm-1,Alpha Shop,1\nSM-B,Beta Shop,1\nsm-c,Caf\u00e9,1\n');
  const r = await runRecon(['sub-merchants', 'import', base], env, 120_000);
  expect(r.code, r.stderr).toBe(0);
  const p = await runRecon(['project'], env, 120_000);
  expect(p.code, p.stderr).toBe(0);
}, 240_000);

afterAll(async () => {
  await killAll();
  await store?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('review16: a partial directory import against the sub-merchants registered already', () => {
  it.each([
    ['a new id under a registered name', 'sm-2,Alpha Shop,1\n', 'name', /sm-1 \("Alpha Shop"\)/],
    ['a new id under a name printing as a registered one (NFD)', 'sm-3,Cafe\u0301,1\n', 'name', /sm-c \("Caf/],
    ['a new id writing a registered statement file', 'sm-b,Beta shop.,1\n', 'sub_merchant_id', /SM-B \("Beta Shop"\)/],
    ['a registered id renamed to another registered name', 'SM-B,Alpha Shop,1\n', 'name', /sm-1 \("Alpha Shop"\)/],
  ])(
    '%s: refused naming the file, the line and the registered sub-merchant, nothing imported',
    async (what, rows, column, stored) => {
      const file = csv(`${what.replaceAll(' ', '-')}.csv`, `sm-ok,Good Shop,1\n${rows}`);
      const before = await eventCount();
      const r = await runRecon(['sub-merchants', 'import', file], env, 120_000);
      expect(r.stderr).toContain(`${file}:3 (column ${column})`);
      expect(r.stderr).toMatch(stored);
      expect(r.stderr).toMatch(/already registered/);
      expect(r.code, r.stderr).toBe(65);
      expect(await eventCount()).toBe(before);
    },
    180_000,
  );

  it('refuses a clash with a sub-merchant imported since the last projection', async () => {
    const first = await runRecon(['sub-merchants', 'import', csv('late.csv', 'sm-late,Late Shop,1\n')], env, 120_000);
    expect(first.code, first.stderr).toBe(0);
    const before = await eventCount();
    const file = csv('later.csv', 'sm-later,Late Shop,1\n');
    const r = await runRecon(['sub-merchants', 'import', file], env, 120_000);
    expect(r.stderr).toContain(`${file}:2 (column name)`);
    expect(r.stderr).toMatch(/sm-late \("Late Shop"\), already registered/);
    expect(r.code, r.stderr).toBe(65);
    expect(await eventCount()).toBe(before);
  }, 180_000);

  it('takes a re-import of registered rows and a rename of a registered id', async () => {
    const again = await runRecon(['sub-merchants', 'import', csv('again.csv', 'sm-1,Alpha Shop,1\n')], env, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('0 registered or changed, 1 unchanged');
    const renamed = csv('renamed.csv', 'sm-c,Caf\u00e9 Two,1\nsm-4,Delta Shop,1\n');
    const r = await runRecon(['sub-merchants', 'import', renamed], env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('2 registered or changed');
  }, 180_000);

  it('takes a re-import of a row unchanged beside a clash the store held before the check', async () => {
    // a registration written before the directory compared imports with the store: two ids of one name
    const old = subMerchant('sm-old', 'Delta Shop');
    await store.append(old.stream, old.events);
    const again = await runRecon(['sub-merchants', 'import', csv('delta.csv', 'sm-4,Delta Shop,1\n')], env, 120_000);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('0 registered or changed, 1 unchanged');
    // a new row of that name is still refused
    const file = csv('delta-new.csv', 'sm-5,Delta Shop,1\n');
    const r = await runRecon(['sub-merchants', 'import', file], env, 120_000);
    expect(r.stderr).toContain(`${file}:2 (column name)`);
    expect(r.code, r.stderr).toBe(65);
  }, 180_000);
});

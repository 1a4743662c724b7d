import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { checkStatementFileNames } from '../../src/export/statements/figures';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * Review 16: a statement's files are named by the sub-merchant's id and a slug of its name, and a month's run
 * in which two sub-merchants would write one file (also on a case-insensitive file system) is refused whole,
 * nothing written for anyone (EXPORT_FILE_NAME_COLLISION). The directory took two such rows: ids differing
 * only in case under names of one slug (`SM-A` "Alpha Shop" and `sm-a` "Alpha shop."), or an id and a name
 * that join into another's (`shop` "1 Kvitka" and `shop-1` "Kvitka"), and every later month's statements
 * failed. The directory now refuses them, naming both lines, nothing imported.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-r16-dir-'));
let db: TestDatabase;
let store: EventStore;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  env = reconEnv({ databaseUrl: db.url, extra: { RECON_LOG_LEVEL: 'error' } });
}, 120_000);

afterAll(async () => {
  await killAll();
  await store?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const eventCount = async () => (await store.readAll()).length;
const HEADER = 'sub_merchant_id,name,reserve_hold_days\n';

describe('review16: the directory refuses two sub-merchants of one statement file', () => {
  it.each([
    ['ids differing only in case, names of one slug', ['SM-A', 'Alpha Shop'], ['sm-a', 'Alpha shop.']],
    ['an id and a name joining into another', ['shop', '1 Kvitka'], ['shop-1', 'Kvitka']],
  ])(
    '%s: refused naming both lines, nothing imported',
    async (_what, first, second) => {
      // what the month's statements would refuse, nothing written for anyone
      expect(() => checkStatementFileNames([first as [string, string], second as [string, string]], '2025-01')).toThrow(
        /would write the same statement file/,
      );
      const before = await eventCount();
      const file = path.join(dir, `directory-${first[0]}.csv`);
      writeFileSync(file, `${HEADER}sm-ok,Good,1\n${first.join(',')},1\n${second.join(',')},1\n`);
      const r = await runRecon(['sub-merchants', 'import', file], env, 120_000);
      expect(r.stderr).toContain(`${file}:4 (column sub_merchant_id)`);
      expect(r.stderr).toContain(`${file}:3`);
      expect(r.stderr).toMatch(/statement file/);
      expect(r.code, r.stderr).toBe(65);
      expect(await eventCount()).toBe(before);
    },
    180_000,
  );

  it('takes ids differing only in case whose statement files differ', async () => {
    const file = path.join(dir, 'directory-ok.csv');
    writeFileSync(file, `${HEADER}SM-B,Beta Shop,1\nsm-b,Gamma Shop,1\n`);
    expect(() =>
      checkStatementFileNames(
        [
          ['SM-B', 'Beta Shop'],
          ['sm-b', 'Gamma Shop'],
        ],
        '2025-01',
      ),
    ).not.toThrow();
    const r = await runRecon(['sub-merchants', 'import', file], env, 120_000);
    expect(r.code, r.stderr).toBe(0);
  }, 180_000);
});

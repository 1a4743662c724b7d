import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import type { DiscrepancyFilter } from '../../src/reconciliation/discrepancy-queries';
import { createPostgresEventStore } from '../../src/store/postgres';
import { listMonth, wholeList } from './list-month';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll } from './fixtures';

/**
 * How `recon discrepancies` ends when its output does (a fresh reviewer's cases, each failing before): stdout
 * on a full disk (the command fails with 74 and its spool is removed; before, an uncaught error skipped the
 * removal), a reader that leaves mid-copy (141, spool removed), a full temp disk (refused, nothing printed), a
 * reader that leaves after the last write was handed over but before it was written (141, not 0: main waits
 * for stdout to flush). Not here: after Ctrl-C while a reader does not read, the process ends only once the
 * reader reads or leaves, a pending write to stdout keeping it alive (docs/reliability.md).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
let db: TestDatabase;
const dirs: string[] = [];
/** A temp directory of the test's own, given to recon as TMPDIR: what is in it after recon ends is its spool. */
function ownTmp(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'recon-list-ends-tmp-'));
  dirs.push(d);
  return d;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const store = createPostgresEventStore(db.sql);
  await appendAll(store, listMonth());
  const deps = { sql: db.sql, store, log: silentLogger, timezone: 'UTC', graceHours: 48 };
  await runProjections({ ...deps, projections: [reconciliation, journal] }, {});
});

afterAll(async () => {
  await db?.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const env = (tmp: string) => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  DATABASE_URL: db.url,
  RECON_LOG_LEVEL: 'error',
  TMPDIR: tmp,
});

const wholeText = (f: DiscrepancyFilter, format: 'json' | 'csv') => wholeList(db.sql, f, 'age', format);

const leftIn = (tmp: string) => readdirSync(tmp).filter((n) => n.startsWith('recon-list-'));

describe('recon discrepancies and its spool', () => {
  it('stdout on a full disk (> /dev/full): the command fails, and its spool is removed', () => {
    const tmp = ownTmp();
    const r = spawnSync(
      'bash',
      ['-c', `'${process.execPath}' bin/recon.mjs discrepancies --no-catch-up --format json > /dev/full`],
      { cwd: ROOT, env: env(tmp), encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).toBe(74);
    expect(r.stderr).toContain('ENOSPC');
    expect(r.stderr).toContain('(OUTPUT_FAILED)');
    // the spool removed however the command ends (src/cli/spool.ts)
    expect(leftIn(tmp)).toEqual([]);
  });

  for (const redirect of ['', '2>&1'])
    it(`a reader that leaves mid-copy (${redirect || 'stdout'} | head -c 10): 141 and the spool removed`, async () => {
      const tmp = ownTmp();
      const json = await wholeText({ timezone: 'UTC' }, 'json');
      const r = spawnSync(
        'bash',
        [
          '-c',
          `set -o pipefail; '${process.execPath}' bin/recon.mjs discrepancies --no-catch-up --format json ${redirect} | head -c 10`,
        ],
        { cwd: ROOT, env: env(tmp), encoding: 'utf8', timeout: 60_000 },
      );
      expect({ status: r.status, stdout: r.stdout, spoolLeft: leftIn(tmp) }).toEqual({
        status: 141,
        stdout: json.slice(0, 10),
        spoolLeft: [],
      });
    });

  it('a full temp disk (ulimit -f: EFBIG on the spool): refused, nothing on stdout, the spool removed', () => {
    const tmp = ownTmp();
    const r = spawnSync(
      'bash',
      ['-c', `ulimit -f 100; '${process.execPath}' bin/recon.mjs discrepancies --no-catch-up --format json`],
      { cwd: ROOT, env: env(tmp), encoding: 'utf8', timeout: 60_000 },
    );
    expect({
      status: r.status,
      stdout: r.stdout.length,
      spoolLeft: leftIn(tmp),
      stderr: r.stderr.split('\n')[0],
    }).toEqual({
      status: 70,
      stdout: 0,
      spoolLeft: [],
      stderr: expect.stringContaining('EFBIG'),
    });
  });

  it('a reader that leaves after the last write was handed over, before it was written: not exit 0', async () => {
    // 65,536 bytes fill the pipe; the last chunk of the spool (3,489 bytes < stdout's 16 KiB high-water mark)
    // is queued with write() returning true, so the copy ends, main returns, and the EPIPE comes later
    const f = { timezone: 'UTC', type: 'fee_mismatch', subMerchantId: 'sm-alpha' };
    const csv = await wholeText(f, 'csv');
    expect(Buffer.byteLength(csv)).toBeGreaterThan(65_536);
    expect(Buffer.byteLength(csv) - 65_536).toBeLessThan(16_384);
    const r = spawnSync(
      'bash',
      [
        '-c',
        `set -o pipefail; '${process.execPath}' bin/recon.mjs discrepancies --no-catch-up --format csv --type fee_mismatch --sub-merchant sm-alpha | sleep 4`,
      ],
      { cwd: ROOT, env: env(ownTmp()), encoding: 'utf8', timeout: 60_000 },
    );
    // what `cat list.csv | sleep 4` gives (cat killed by SIGPIPE)
    expect(r.status).toBe(141);
  });
});

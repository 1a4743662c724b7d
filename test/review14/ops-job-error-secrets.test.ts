import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { loadConfig, secretValues } from '../../src/config/env';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler } from '../../src/scheduler/scheduler';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * A job's error went into job_runs.error (and `recon run`'s output) as thrown. The log scrubs the configured
 * secrets and card numbers from every line, but job_runs — shown by the console's jobs page and `recon jobs` —
 * kept them: a sub-merchant directory whose reserve_hold_days column holds a card number (columns shifted in a
 * spreadsheet) failed the nightly run with the number quoted; a driver's message quoting a connection string kept
 * its password. Both are now scrubbed before the error is recorded or returned, as the log scrubs them.
 */

const PAN = '4111 1111 1111 1111';
const PAN_DIGITS = '4111111111111111';
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('a failed job run records no secret and no card number', () => {
  it('recon run: a directory quoting a card number fails the nightly run without keeping the number', {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'r14-ops-pan-'));
    const csv = path.join(dir, 'sub-merchants.csv');
    writeFileSync(csv, `sub_merchant_id,name,reserve_hold_days\nsm-1,Shop One,${PAN}\n`);
    const r = await runRecon(
      ['run', 'nightly-reconciliation'],
      reconEnv({ databaseUrl: db.url, extra: { RECON_SUB_MERCHANTS: csv, RECON_OUT_DIR: dir } }),
    );
    expect(r.code).toBe(1);
    const [run] = await runsOf(db.sql, 'nightly-reconciliation');
    expect(run?.status).toBe('failed');
    // the run failed for the directory's reason, named...
    expect(run?.error).toContain('reserve_hold_days');
    // ...without the number, in the table and on the command's output
    const digits = (t: string) => t.replace(/[ -]/g, '');
    expect(digits(run?.error ?? '')).not.toContain(PAN_DIGITS);
    expect(digits(r.stdout)).not.toContain(PAN_DIGITS);
    expect(r.stdout).toContain('failed');
  });

  it('a driver message quoting DATABASE_URL: the password is not recorded', async () => {
    const password = 'Db-Pass_9f3kQ7';
    const url = `postgres://recon:${password}@db.internal:5432/recon`;
    const c = loadConfig({ DATABASE_URL: url, RECON_TIMEZONE: 'UTC' });
    if (!c.ok) throw new Error(JSON.stringify(c.issues));
    const s = createScheduler({
      sql: db.sql,
      timezone: 'UTC',
      secrets: secretValues(c.config),
      jobs: [
        {
          name: 'quotes-url',
          description: 'fails as a client quoting its connection string does',
          cron: '0 3 * * *',
          run: async () => {
            throw new Error(`could not connect to ${url}: connection refused`);
          },
        },
      ],
    });
    const o = await s.runNow('quotes-url');
    const [run] = await runsOf(db.sql, 'quotes-url');
    expect(run?.status).toBe('failed');
    expect(run?.error).toContain('connection refused');
    expect(run?.error).not.toContain(password);
    expect(o.status === 'failed' ? o.error : '').not.toContain(password);
  });
});

import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { type ListFormat, printDiscrepancies } from '../../src/cli/discrepancy-print';
import { connect } from '../../src/db/connect';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import {
  acceptDiscrepancy,
  type DiscrepancyFilter,
  listDiscrepancies,
  type DiscrepancySort,
} from '../../src/reconciliation/discrepancy-queries';
import { withDiscrepancyPasses } from '../../src/reconciliation/discrepancy-stream';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { listMonth, wholeList } from './list-month';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll } from './fixtures';

/**
 * `recon discrepancies` prints its list as it reads it, a batch at a time (a month of a million payments lists
 * a million rows). Whatever the batch, it prints the bytes of the list read whole and sorted in memory: ties in
 * time (several discrepancies of one operation, operations at one instant), amounts equal and absent, an
 * accepted row (the table's extra column), every format and order.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, listMonth());
  const deps = { sql: db.sql, store, log: silentLogger, timezone: 'UTC', graceHours: 48 };
  await runProjections({ ...deps, projections: [reconciliation, journal] }, {});
  const open = await listDiscrepancies(db.sql, { status: 'open', timezone: 'UTC' });
  if (!open.ok) throw new Error(open.message);
  const accepted = await acceptDiscrepancy(
    { sql: db.sql, store },
    {
      id: open.value[3]!.id,
      note: 'known, agreed with the PSP',
      by: 'ann',
      at: new Date('2024-05-14T09:00:00Z'),
      decision: 'withhold',
    },
  );
  if (!accepted.ok) throw new Error(accepted.message);
  await runProjections({ ...deps, projections: [reconciliation, journal] }, {});
});

afterAll(async () => {
  await db?.drop();
});

const whole = (f: DiscrepancyFilter, sort: DiscrepancySort, format: ListFormat) => wholeList(db.sql, f, sort, format);

async function inBatches(f: DiscrepancyFilter, sort: DiscrepancySort, format: ListFormat, batch: number) {
  let text = '';
  let largest = 0;
  const r = await withDiscrepancyPasses(
    db.sql,
    f,
    sort,
    (pass) =>
      printDiscrepancies(
        db.sql,
        (each) =>
          pass((rows) => {
            largest = Math.max(largest, rows.length);
            return each(rows);
          }),
        format,
        (t) => {
          text += t;
          return undefined;
        },
      ),
    batch,
  );
  if (!r.ok) throw new Error(r.message);
  return { text, largest };
}

describe('recon discrepancies read in batches', () => {
  it('has the ties, the accepted row and the amounts the comparison needs', async () => {
    const r = await listDiscrepancies(db.sql, { timezone: 'UTC' });
    if (!r.ok) throw new Error(r.message);
    const types = new Set(r.value.map((d) => d.type));
    for (const t of ['missing_in_report', 'fee_mismatch', 'amount_mismatch']) expect(types, t).toContain(t);
    expect(r.value.filter((d) => d.status === 'accepted')).toHaveLength(1);
    const times = r.value.map((d) => d.occurred_at);
    expect(new Set(times).size).toBe(3);
    expect(r.value.length).toBeGreaterThan(20);
  });

  for (const format of ['table', 'csv', 'json'] as const)
    for (const sort of ['age', 'amount'] as const)
      it(`prints the bytes of the whole list: ${format}, by ${sort}, in batches of 1, 7 and 1000`, async () => {
        const f = { timezone: 'UTC' };
        const expected = await whole(f, sort, format);
        for (const batch of [1, 7, 1000]) {
          const got = await inBatches(f, sort, format, batch);
          expect(got.text, `batch ${batch}`).toBe(expected);
          expect(got.largest).toBeLessThanOrEqual(batch);
        }
      });

  it('filters as the whole list does, and prints an empty list as it did', async () => {
    for (const f of [
      { timezone: 'UTC', status: 'open', subMerchantId: 'sm-alpha' },
      { timezone: 'UTC', type: 'fee_mismatch', from: '2024-05-10', to: '2024-05-10' },
      { timezone: 'UTC', from: '2030-01-01' },
    ])
      for (const format of ['table', 'csv', 'json'] as const)
        for (const sort of ['age', 'amount'] as const)
          expect((await inBatches(f, sort, format, 5)).text, JSON.stringify([f, format, sort])).toBe(
            await whole(f, sort, format),
          );
    expect((await inBatches({ timezone: 'UTC', from: '2030-01-01' }, 'age', 'json', 5)).text).toBe('[]\n');
  });

  it('refuses a bad filter before reading, naming the field', async () => {
    const r = await withDiscrepancyPasses(db.sql, { timezone: 'UTC', type: 'nonsense' }, 'age', async () => 1);
    expect(r).toMatchObject({ ok: false, code: 'INVALID_FILTER' });
    expect(!r.ok && r.message).toMatch(/^type: expected one of/);
  });

  const env = () => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATABASE_URL: db.url,
    RECON_LOG_LEVEL: 'error',
  });

  it('the recon binary prints every format as the list read whole', async () => {
    for (const [format, sort] of [
      ['csv', 'amount'],
      ['json', 'age'],
      ['table', 'age'],
    ] as const) {
      const r = spawnSync(
        process.execPath,
        [path.join(ROOT, 'bin/recon.mjs'), 'discrepancies', '--format', format, '--sort', sort],
        { cwd: ROOT, env: env(), encoding: 'utf8', timeout: 60_000 },
      );
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(await whole({ timezone: 'UTC' }, sort, format));
    }
  });

  it('stops when its reader goes away (recon discrepancies | head), with 141 as a Unix filter', async () => {
    const json = await whole({ timezone: 'UTC' }, 'age', 'json');
    expect(json.length).toBeGreaterThan(64 * 1024);
    // head reads 10 bytes and leaves: the rest of recon's writing meets EPIPE
    const r = spawnSync(
      'bash',
      ['-c', `set -o pipefail; '${process.execPath}' bin/recon.mjs discrepancies --format json | head -c 10`],
      // at the default log level: a reader that left is said by the status alone
      { cwd: ROOT, env: { ...env(), RECON_LOG_LEVEL: 'info' }, encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.stdout).toBe(json.slice(0, 10));
    // at the default log level: the catch-up's lines, and nothing about the reader (its status says it)
    expect(r.stderr).not.toMatch(/EPIPE|signal received|INTERRUPTED/);
    expect(r.status).toBe(141);
  });

  it('holds no lock on the views while a slow reader pages (a new build can go live meanwhile)', async () => {
    // a reviewer's case: the snapshot held while stdout waited kept promote's view replacement waiting
    const child = spawn(
      'bash',
      [
        '-c',
        `'${process.execPath}' bin/recon.mjs discrepancies --no-catch-up --format json | (sleep 6; cat >/dev/null)`,
      ],
      { cwd: ROOT, env: env(), stdio: 'ignore' },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      // until recon is connected, then long enough for it to have read the list and to be writing it to a
      // pipe nobody reads yet (the list is read in well under a second)
      const connected = async () => {
        const [c] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and application_name like 'recon:%'
            and application_name <> ${`recon:${process.pid}`}`;
        return (c?.n ?? 0) > 0;
      };
      const deadline = Date.now() + 5_000;
      let seen = await connected();
      while (!seen && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await connected();
      }
      await new Promise((r) => setTimeout(r, 1_500));
      expect(seen).toBe(true);
      expect(await republishView()).toBe('published');
    } finally {
      expect(await exited).toBe(0);
    }
  });

  it('prints nothing on stdout when it is refused (read models of an earlier version)', async () => {
    const cols = await db.sql<{ column_name: string }[]>`
      select column_name from information_schema.columns
      where table_schema = 'recon' and table_name = 'discrepancies' order by ordinal_position`;
    const older = cols.map((c) => c.column_name).filter((c) => c !== 'amount_in_doubt_now');
    await db.sql.unsafe('alter view recon.discrepancies rename to discrepancies_built_now');
    await db.sql.unsafe(
      `create view recon.discrepancies as select ${older.map((c) => `"${c}"`).join(', ')} from recon.discrepancies_built_now`,
    );
    try {
      for (const format of ['csv', 'json', 'table']) {
        const r = spawnSync(
          process.execPath,
          [path.join(ROOT, 'bin/recon.mjs'), 'discrepancies', '--no-catch-up', '--format', format],
          { cwd: ROOT, env: env(), encoding: 'utf8', timeout: 60_000 },
        );
        expect(r.stderr).toContain('run `recon project` to rebuild them');
        expect(r.stdout).toBe('');
        expect(r.status).not.toBe(0);
      }
    } finally {
      await db.sql.unsafe('drop view recon.discrepancies');
      await db.sql.unsafe('alter view recon.discrepancies_built_now rename to discrepancies');
    }
  });
});

/** What promote (src/projector/promote.ts) runs when a new build goes live: the view re-pointed, waiting 1 s at most. */
async function republishView(): Promise<string> {
  const other = connect(db.url, { max: 1 });
  try {
    const [v] = await other<{ def: string }[]>`select pg_get_viewdef('recon.discrepancies'::regclass) as def`;
    await other.begin(async (tx) => {
      await tx`set local lock_timeout = '1s'`;
      await tx.unsafe(`create or replace view recon.discrepancies as ${v!.def}`);
    });
    return 'published';
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  } finally {
    await other.end();
  }
}

import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BankFileEntry, writeCamt053Stream } from '../../src/sandbox/bank-files';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon, spawnRecon, waitFor } from './support/processes';
import { countEvents, eventIds, storeIntegrity } from './support/store-checks';

/**
 * `kill -9` of `recon bank import` while it inserts a large camt.053 (one bulk append: one transaction),
 * then the same command again: nothing of the killed import is in the store, and afterwards every entry is
 * in it exactly once and the statement once, the same event ids as an uninterrupted import into another
 * database.
 */
const ACCOUNT = 'UA213223130000026007233566001';
const ENTRIES = 8_000;
// the machine may be shared: the runs are bounded generously
const RUN_MS = 240_000;
let dir: string;
let file: string;
let env: (url: string) => NodeJS.ProcessEnv;
let reference: TestDatabase;
let db: TestDatabase;

function entryAt(i: number): BankFileEntry {
  // every fifth entry has no bank reference, and equal ones repeat within a day: ids by occurrence
  return {
    direction: i % 4 === 0 ? 'debit' : 'credit',
    amount: BigInt(100 + (i % 50)),
    bookingDate: `2025-07-${String(1 + Math.floor(i / 500)).padStart(2, '0')}`,
    ...(i % 5 === 0 ? {} : { bankRef: `K${i}` }),
    details: [{ remittance: i % 5 === 0 ? 'card batch' : `payment ${i}`, counterpartyName: 'PSP' }],
  };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'recon-kill-bank-'));
  file = path.join(dir, 'statement.xml');
  const out = createWriteStream(file);
  await writeCamt053Stream(
    out,
    {
      accountId: ACCOUNT,
      currency: 'UAH',
      statementId: 'KILL-1',
      openingDate: '2025-07-01',
      closingDate: '2025-07-20',
      openingBalance: 0n,
    },
    ENTRIES,
    entryAt,
  );
  out.end();
  await finished(out);
  const config = path.join(dir, 'recon-config.json');
  writeFileSync(config, JSON.stringify({ bank: { accounts: [{ id: ACCOUNT, currency: 'UAH', role: 'settlement' }] } }));
  env = (url) => reconEnv({ databaseUrl: url, extra: { RECON_CONFIG: config } });
  [reference, db] = await Promise.all([createTestDatabase(), createTestDatabase()]);
});

afterAll(async () => {
  await killAll();
  await reference?.drop();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 in the middle of a bank import', () => {
  it('loses and duplicates nothing once run again', { timeout: 600_000 }, async () => {
    const referenceRun = runRecon(['bank', 'import', file], env(reference.url), RUN_MS);
    const victim = spawnRecon(['bank', 'import', file], env(db.url));
    // the import is one bulk append (one transaction): kill it once it has inserted into es_events
    await waitFor(
      async () => {
        const [r] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()
            and query ilike '%insert into es_events%es_bulk_stage%'`;
        return r!.n > 0 ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 5, what: 'the bulk inserting into es_events' },
    );
    victim.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');
    const partial = await countEvents(db.sql, 'bank-%');
    // nothing of an import is half-applied: the killed one left nothing
    expect(partial).toBe(0);

    const ref = await referenceRun;
    expect(ref.code, ref.stderr.slice(-2000)).toBe(0);
    expect(ref.stdout).toMatch(
      new RegExp(`statements 1 new, 0 already known; entries ${ENTRIES} new, 0 already known`),
    );
    const expected = await eventIds(reference.sql, 'bank-%');
    expect(expected).toHaveLength(ENTRIES + 1);
    expect(await countEvents(db.sql, 'bank-%')).toBe(0);

    const again = await runRecon(['bank', 'import', file], env(db.url), RUN_MS);
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    expect(again.stdout).toMatch(
      new RegExp(`statements 1 new, 0 already known; entries ${ENTRIES - partial} new, ${partial} already known`),
    );
    const integrity = await storeIntegrity(db.sql);
    expect(integrity.duplicateIds).toEqual([]);
    // equal payments of one day are equal events under different ids (their occurrence): as many as in the reference
    const byHash = (l: { contentHash: string }[]) => [...l].sort((a, b) => a.contentHash.localeCompare(b.contentHash));
    expect(byHash(integrity.duplicateContent)).toEqual(byHash((await storeIntegrity(reference.sql)).duplicateContent));
    expect(integrity.duplicateContent.length).toBeGreaterThan(0);
    expect(integrity.revisionGaps).toEqual([]);
    expect(await eventIds(db.sql, 'bank-%')).toEqual(expected);

    const third = await runRecon(['bank', 'import', file], env(db.url), RUN_MS);
    expect(third.stdout).toMatch(
      new RegExp(`statements 0 new, 1 already known; entries 0 new, ${ENTRIES} already known`),
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settlementCredit, statementImported } from '../../fixtures/bank-events';
import { reconEnv } from '../../fixtures/psp-env';
import { appendAll } from '../discrepancies/fixtures';
import { killAll, runRecon } from '../faults/support/processes';
import { type CollatedDatabase, createCollatedDatabase } from '../support/collated-db';

/**
 * Review 16: `recon bank statements` and `recon bank entries` broke ties (two statements of an account closing on
 * one day, the entries of an account on one day) by statement id and bank reference in the database server's
 * collation: on an operator's server collating in en-US (DATABASE_URL) "stmt-b" came before "STMT-C", on the
 * embedded server (C) after. Both list by code unit now, as the nightly cash sheet does.
 */

const ACCOUNT = 'DE89370400440532013000';
const STATEMENTS = ['stmt-b', 'STMT-C', 'stmt-a'];
const REFS = ['ref-a', 'REF-B', 'ref-c'];
const byCodeUnit = (xs: readonly string[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const made: CollatedDatabase[] = [];
afterAll(async () => {
  await killAll();
  for (const d of made) await d.drop();
});

const env = (d: CollatedDatabase) => reconEnv({ databaseUrl: d.url, extra: { RECON_LOG_LEVEL: 'error' } });

async function bank(locale: 'C' | 'icu'): Promise<CollatedDatabase> {
  const d = await createCollatedDatabase(locale);
  made.push(d);
  await appendAll(d.store, [
    ...STATEMENTS.map((statementId) =>
      statementImported({ accountId: ACCOUNT, currency: 'EUR', statementId, from: '2025-06-02', to: '2025-06-02' }),
    ),
    ...REFS.map((bankRef) =>
      settlementCredit({
        accountId: ACCOUNT,
        currency: 'EUR',
        bankRef,
        day: '2025-06-02',
        amount: 100n,
        statementId: 'stmt-a',
      }),
    ),
  ]);
  const p = await runRecon(['project'], env(d), 120_000);
  expect(p.code, p.stderr).toBe(0);
  return d;
}

/** The values of `words` in the order the command printed them. */
async function printed(d: CollatedDatabase, args: string[], words: readonly string[]): Promise<string[]> {
  const r = await runRecon(['bank', ...args], env(d), 120_000);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout
    .split('\n')
    .map((l) => words.find((w) => l.split(/\s+/).includes(w)))
    .filter((w): w is string => w !== undefined);
}

describe('review16: the bank listings on a server that collates by locale', () => {
  let c: CollatedDatabase;
  let icu: CollatedDatabase;
  beforeAll(async () => {
    c = await bank('C');
    icu = await bank('icu');
  }, 300_000);

  it('`recon bank statements` breaks a tie by statement id in code unit order on both servers', async () => {
    expect(await printed(c, ['statements'], STATEMENTS)).toEqual(byCodeUnit(STATEMENTS));
    expect(await printed(icu, ['statements'], STATEMENTS)).toEqual(byCodeUnit(STATEMENTS));
  }, 240_000);

  it('`recon bank entries` breaks a tie by bank reference in code unit order on both servers', async () => {
    expect(await printed(c, ['entries'], REFS)).toEqual(byCodeUnit(REFS));
    expect(await printed(icu, ['entries'], REFS)).toEqual(byCodeUnit(REFS));
  }, 240_000);
});

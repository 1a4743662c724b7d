import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { subMerchants } from '../../src/console/pages/sub-merchant';
import { appendAll, subMerchant } from '../discrepancies/fixtures';
import { killAll, runRecon } from '../faults/support/processes';
import { type CollatedDatabase, createCollatedDatabase } from '../support/collated-db';

/**
 * Review 16: `recon sub-merchants list` and the console's sub-merchant page ordered the directory by id in the
 * database server's collation: on an operator's server collating in en-US (DATABASE_URL) the same directory
 * listed in another order than on the embedded server (C), "alpha" before "Beta". Both list by code unit now,
 * as the statements and the nightly report do.
 */

const IDS = ['alpha', 'Beta', 'gamma_1', 'Gamma-2', 'delta'];
// code unit order: upper case before lower case, '-' (U+002D) before '_' (U+005F)
const CODE_UNIT = [...IDS].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const made: CollatedDatabase[] = [];
afterAll(async () => {
  await killAll();
  for (const d of made) await d.drop();
});

async function directory(locale: 'C' | 'icu'): Promise<CollatedDatabase> {
  const d = await createCollatedDatabase(locale);
  made.push(d);
  await appendAll(
    d.store,
    IDS.map((id) => subMerchant(id, `${id} shop`)),
  );
  const p = await runRecon(['project'], env(d), 120_000);
  expect(p.code, p.stderr).toBe(0);
  return d;
}

const env = (d: CollatedDatabase) => reconEnv({ databaseUrl: d.url, extra: { RECON_LOG_LEVEL: 'error' } });

async function listed(d: CollatedDatabase): Promise<string[]> {
  const r = await runRecon(['sub-merchants', 'list', '--format', 'csv'], env(d), 120_000);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(',')[0]!);
}

describe('review16: the sub-merchant listings on a server that collates by locale', () => {
  let c: CollatedDatabase;
  let icu: CollatedDatabase;
  beforeAll(async () => {
    c = await directory('C');
    icu = await directory('icu');
  }, 300_000);

  it('the en-US server itself orders the ids otherwise than by code unit', async () => {
    const rows = await icu.sql<{ id: string }[]>`select unnest(${IDS}::text[]) as id order by id`;
    expect(rows.map((r) => r.id)).not.toEqual(CODE_UNIT);
  });

  it('`recon sub-merchants list` lists by code unit on both servers', async () => {
    expect(await listed(c)).toEqual(CODE_UNIT);
    expect(await listed(icu)).toEqual(CODE_UNIT);
  }, 240_000);

  it("the console's sub-merchant page lists by code unit on both servers", async () => {
    expect((await subMerchants(c.sql))?.map((r) => r.sub_merchant_id)).toEqual(CODE_UNIT);
    expect((await subMerchants(icu.sql))?.map((r) => r.sub_merchant_id)).toEqual(CODE_UNIT);
  });
});

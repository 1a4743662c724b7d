import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feeContractStream } from '../../src/events/order-events';
import { importFeeContract, parseFeeContract } from '../../src/ingest/fee-contract';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Review 14: a contract's percentage was compared as the text written, so the same contract saved again by a
 * spreadsheet (2.90 written 2.9, 1.50 written 1.5) added a new version of every such line: the history showed a
 * change that never happened, and each new version judged every paid order again. The same percentage is now
 * unchanged however it is written; a percentage that differs is still a new version.
 */

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
}, 120_000);
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const HEADER = 'sub_merchant_id,method,currency,percent,fixed,effective_from,rounding\n';
const contract = (a: string, b: string) =>
  `${HEADER}sm-a,purchase,EUR,${a},0.30,2026-01-01,\nsm-b,purchase,EUR,${b},0,2026-01-01,down\n`;

async function importText(text: string) {
  const r = parseFeeContract(text, 'contract.csv');
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return importFeeContract(store, r.lines, { file: 'contract.csv' });
}

describe('review14: a contract saved again with its percentages written otherwise', () => {
  it('is unchanged, and a percentage that differs is a new version', async () => {
    expect(await importText(contract('2.90', '1.50'))).toEqual({ set: 2, unchanged: 0 });
    expect(await importText(contract('2.9', '1.5'))).toEqual({ set: 0, unchanged: 2 });
    expect(await importText(contract('002.900', '01.5000'))).toEqual({ set: 0, unchanged: 2 });
    expect((await store.readStream(feeContractStream('sm-a'))).length).toBe(1);
    expect(await importText(contract('2.95', '1.5'))).toEqual({ set: 1, unchanged: 1 });
    const history = await store.readStream(feeContractStream('sm-a'));
    expect(history.map((e) => (e.data as { percent: string }).percent)).toEqual(['2.90', '2.95']);
  });
});

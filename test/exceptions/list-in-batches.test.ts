import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as exceptions } from '../../projections/exceptions';
import { projection as reconciliation } from '../../projections/reconciliation';
import { exceptionPageJson, exceptionTable, printExceptionList } from '../../src/cli/exception-print';
import { ExceptionRefused } from '../../src/exceptions/errors';
import { type ExceptionItem, listExceptions } from '../../src/exceptions/queries';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll } from '../discrepancies/fixtures';
import { listMonth } from '../discrepancies/list-month';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The exception lists (`recon exceptions list`, GET /api/exceptions, a bulk action) read the discrepancies
 * through a cursor and stop once the page and the one after it are known: a page of 100 of a month's million
 * discrepancies reads a batch or two. Whatever the batch, pages put together are the list read whole, in the
 * keyset's order (the month has many discrepancies at one instant, ties broken by id).
 */

let db: TestDatabase;
let store: EventStore;
const NOW = new Date('2024-05-20T00:00:00Z');

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, listMonth());
  const deps = { sql: db.sql, store, log: silentLogger, timezone: 'UTC', graceHours: 48 };
  await runProjections({ ...deps, projections: [reconciliation, exceptions] }, {});
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const keyOf = (x: ExceptionItem) => `${x.discrepancy.occurred_at ?? x.discrepancy.detected_at ?? ''}|${x.id}`;

async function pages(filter: Record<string, unknown>, limit: number, batchRows: number) {
  const all: ExceptionItem[] = [];
  const batches: number[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await listExceptions(db.sql, { ...filter, limit, after }, NOW, undefined, {
      batchRows,
      onBatch: (n) => batches.push(n),
    });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    all.push(...page.items);
    if (page.next === null) return { all, batches };
    after = page.next;
  }
}

describe('listExceptions reads in batches', () => {
  it('the whole list is in the keyset order, and pages of any size over batches of any size put it together', async () => {
    const whole = (await listExceptions(db.sql, {}, NOW)).items;
    expect(whole.length).toBeGreaterThan(200);
    const keys = whole.map(keyOf);
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
    for (const [limit, batch] of [
      [13, 7],
      [100, 1000],
      [1, 3],
      [250, 64],
    ] as const) {
      const { all } = await pages({}, limit, batch);
      expect(all.map((x) => x.id)).toEqual(whole.map((x) => x.id));
    }
  });

  it('a filtered list pages the same (state and amount are judged in memory, after the rows are read)', async () => {
    const filter = { state: 'open', minAmount: 1_200n };
    const whole = (await listExceptions(db.sql, filter, NOW)).items;
    expect(whole.length).toBeGreaterThan(10);
    expect(whole.every((x) => x.state === 'open' && BigInt(x.amountInDoubt ?? '-1') >= 1_200n)).toBe(true);
    const { all } = await pages(filter, 9, 5);
    expect(all.map((x) => x.id)).toEqual(whole.map((x) => x.id));
  });

  it('a page stops reading once it and the next are known', async () => {
    const batches: number[] = [];
    const page = await listExceptions(db.sql, { limit: 5 }, NOW, undefined, {
      batchRows: 7,
      onBatch: (n) => batches.push(n),
    });
    expect(page.items).toHaveLength(5);
    expect(page.next).not.toBeNull();
    // six items (the page and one more) are in the first batch of seven: nothing else is fetched
    expect(batches).toEqual([7]);
    const whole = await listExceptions(db.sql, {}, NOW, undefined, { batchRows: 7, onBatch: () => {} });
    expect(whole.items.length).toBeGreaterThan(7 * 30);
  });

  it('`recon exceptions list` printed page by page is the bytes of the list printed whole, in both formats', async () => {
    for (const filter of [{}, { state: 'open' }, { leg: 'psp', minAmount: 1_000n }, { state: 'accepted' }]) {
      const whole = (await listExceptions(db.sql, filter, NOW)).items;
      for (const format of ['table', 'json'] as const) {
        for (const batchRows of [7, 1000]) {
          let text = '';
          await printExceptionList(db.sql, filter, { now: NOW, format, batchRows }, (t) => void (text += t));
          expect(text).toBe(format === 'table' ? exceptionTable(whole) : exceptionPageJson(whole, null));
        }
      }
    }
  });

  it('the whole list after a cursor is the rest of the list', async () => {
    const whole = (await listExceptions(db.sql, {}, NOW)).items;
    const first = await listExceptions(db.sql, { limit: 50 }, NOW);
    let text = '';
    await printExceptionList(db.sql, { after: first.next! }, { now: NOW, format: 'json', batchRows: 11 }, (t) => {
      text += t;
      return undefined;
    });
    expect(text).toBe(exceptionPageJson(whole.slice(50), null));
  });

  it('refuses an `after` that is not the `next` of a page, naming it, before any query', async () => {
    const id = '00000000-0000-0000-0000-000000000000';
    for (const t of ['1', '-', '12:00', 'T', '2024-99-99', '+', '99999999', '2024-02-30T00:00:00.000Z', '2024-05-10']) {
      const after = Buffer.from(`${t}|${id}`).toString('base64url');
      const e = await listExceptions(db.sql, { limit: 5, after }, NOW).then(
        () => null,
        (x: unknown) => x,
      );
      expect(e, t).toBeInstanceOf(ExceptionRefused);
      expect((e as ExceptionRefused).field).toBe('after');
    }
    // a real `next`, and the empty time of a discrepancy without one, are taken
    const first = await listExceptions(db.sql, { limit: 5 }, NOW);
    await expect(listExceptions(db.sql, { limit: 5, after: first.next! }, NOW)).resolves.toBeTruthy();
    const noTime = Buffer.from(`|${id}`).toString('base64url');
    expect((await listExceptions(db.sql, { limit: 5, after: noTime }, NOW)).items).toHaveLength(5);
  });
});

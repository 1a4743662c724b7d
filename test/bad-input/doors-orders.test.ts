import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp, type HttpApp } from '../../src/http/http-app';
import { createOrdersApi } from '../../src/http/orders-api';
import { asyncRoute } from '../../src/http/routes';
import { formatOrderIssue, importOrderFile } from '../../src/ingest/orders/import';
import { orderInput } from '../../src/ingest/orders/input';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import {
  expectedInstant,
  instantText,
  NOW,
  orderCases,
  type OrderCase,
  referenceRefused,
  referenceText,
} from './doors-orders.cases';

/**
 * The orders door (issue 23, docs/bad-input.md "Orders, fee contract, directory, APIs, CLI output"): every case
 * of doors-orders.cases.ts through orderInput, a CSV file, an NDJSON file and POST /api/orders, each with its
 * exact outcome and the store counted; generated times and texts against an oracle; the flat layout (issue 25);
 * then every projection runs to the head of the store.
 */

const TOKEN = 'orders-token-doors-0123456789';
const dir = mkdtempSync(path.join(tmpdir(), 'recon-doors-orders-'));
let db: TestDatabase;
let store: EventStore;
let app: HttpApp;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const orders = createOrdersApi({ store, token: TOKEN, now: () => NOW });
  app = createHttpApp({ routes: [asyncRoute('/api/orders', orders, silentLogger)], log: silentLogger });
  base = (await app.listen(0)).url;
});
afterAll(async () => {
  await app?.close({ graceMs: 1000 });
  await store?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const eventCount = async () => (await store.readAll()).length;
const file = (name: string, text: string | Buffer) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const csvCell = (v: string) => `"${v.replace(/"/g, '""')}"`;
function csvOf(records: readonly Readonly<Record<string, string>>[]): string {
  const columns = [...new Set(records.flatMap((r) => Object.keys(r)))];
  return (
    [columns.join(','), ...records.map((r) => columns.map((k) => csvCell(r[k] ?? '')).join(','))].join('\n') + '\n'
  );
}
const post = (body: unknown) =>
  fetch(`${base}/api/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** What one accepted case stored: the event's data fields the case names. */
async function storedValues(orderId: string, keys: readonly string[]) {
  const events = await store.readStream(`order-${orderId}`);
  expect(events).toHaveLength(1);
  const data = events[0]!.data as Record<string, unknown>;
  return Object.fromEntries(keys.map((k) => [k, data[k]]));
}

/** Each case's record under another order id, so that the four ways in never meet in the store. */
const as = (k: OrderCase, suffix: string) => ({ ...k.record, order_id: `${k.record.order_id}${suffix}` });
/** The order id the store would hold, when the case's own id is acceptable. */
const idOk = (k: OrderCase) => !('refused' in k.outcome && k.outcome.refused === 'order_id');

describe('orders door: the corpus, case by case', () => {
  it.each(orderCases.map((k) => [k.name, k] as const))('orderInput: %s', (_name, k) => {
    const r = orderInput(k.record, { now: NOW });
    if ('refused' in k.outcome) {
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.field).toBe(k.outcome.refused);
        expect(r.message).toMatch(k.outcome.reason);
      }
    } else {
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.item.event.data).toMatchObject(k.outcome.accepted);
    }
  });

  it.each(orderCases.map((k) => [k.name, k] as const))('NDJSON file, CSV file and API: %s', async (_name, k) => {
    for (const [way, suffix] of [
      ['ndjson', '-n'],
      ['csv', '-c'],
      ['api', '-a'],
    ] as const) {
      if (way === 'csv' && k.inFiles === false) continue;
      const record = idOk(k) ? as(k, suffix) : k.record;
      const before = await eventCount();
      let refusal: { field: string | null; message: string } | undefined;
      if (way === 'api') {
        const res = await post(record);
        const body = (await res.json()) as { field?: string; message?: string };
        if ('refused' in k.outcome) {
          expect(res.status, way).toBe(400);
          refusal = { field: body.field ?? null, message: body.message ?? '' };
        } else expect(res.status, JSON.stringify(body)).toBe(200);
      } else {
        const name = `case-${record.order_id.replace(/[^\w-]/g, '_')}.${way}`;
        const text = way === 'csv' ? csvOf([record]) : `${JSON.stringify(record)}\n`;
        const r = await importOrderFile(store, file(name, text), way, { now: NOW });
        if ('refused' in k.outcome) {
          expect(r.ok, way).toBe(false);
          if (!r.ok) {
            expect(r.issues, way).toHaveLength(1);
            expect(formatOrderIssue(r.issues[0]!)).toMatch(new RegExp(`^${name}:${way === 'csv' ? 2 : 1} \\(field `));
            refusal = { field: r.issues[0]!.field, message: r.issues[0]!.message };
          }
        } else expect(r, way).toMatchObject({ ok: true, appended: 1 });
      }
      if ('refused' in k.outcome) {
        expect(refusal?.field, way).toBe(k.outcome.refused);
        expect(refusal?.message, way).toMatch(k.outcome.reason);
        expect(await eventCount(), `${way}: the store is unchanged`).toBe(before);
      } else {
        expect(await eventCount(), way).toBe(before + 1);
        const values = k.outcome.accepted;
        expect(await storedValues(record.order_id, Object.keys(values)), way).toEqual(values);
      }
    }
  });
});

describe('orders door: generated cases (fast-check) against an oracle', () => {
  it('created_at of any year, calendar, clock and zone: refused naming created_at, or stored as the oracle says', () => {
    let refused = 0;
    let accepted = 0;
    fc.assert(
      fc.property(instantText, (text) => {
        const r = orderInput({ order_id: 'gen-t', amount: '1.00', currency: 'EUR', created_at: text }, { now: NOW });
        const expected = expectedInstant(text);
        if (expected === null) {
          expect(r).toMatchObject({ ok: false, field: 'created_at' });
          refused++;
        } else {
          expect(r.ok, text).toBe(true);
          if (r.ok) expect((r.item.event.data as { createdAt: string }).createdAt).toBe(expected);
          accepted++;
        }
      }),
      { numRuns: 300, seed: 23 },
    );
    // both outcomes are exercised
    expect(refused).toBeGreaterThan(20);
    expect(accepted).toBeGreaterThan(20);
  });

  it('customer_reference of any characters: refused naming it, or stored exactly', () => {
    let refused = 0;
    fc.assert(
      fc.property(referenceText, (text) => {
        const r = orderInput(
          {
            order_id: 'gen-r',
            amount: '1.00',
            currency: 'EUR',
            created_at: '2026-01-01T00:00:00Z',
            customer_reference: text,
          },
          { now: NOW },
        );
        if (referenceRefused(text)) {
          expect(r).toMatchObject({ ok: false, field: 'customer_reference' });
          refused++;
        } else {
          expect(r.ok).toBe(true);
          if (r.ok) expect((r.item.event.data as { customerReference: unknown }).customerReference).toBe(text || null);
        }
      }),
      { numRuns: 300, seed: 25 },
    );
    expect(refused).toBeGreaterThan(20);
  });

  it('generated orders through the API: 400 naming the field and nothing stored, or 200 and stored', async () => {
    // a plausible time half of the time, so that both outcomes are frequent
    const created = fc.oneof(instantText, fc.constant('2026-03-01T10:00:00+02:00'));
    const samples = fc.sample(fc.tuple(created, referenceText), { numRuns: 120, seed: 7 });
    let stored = 0;
    for (const [i, [created, ref]] of samples.entries()) {
      const before = await eventCount();
      const res = await post({
        order_id: `gen-api-${i}`,
        amount: '5.00',
        currency: 'UAH',
        created_at: created,
        customer_reference: ref,
      });
      const body = (await res.json()) as { field?: string };
      const bad =
        expectedInstant(created) === null ? 'created_at' : referenceRefused(ref) ? 'customer_reference' : null;
      if (bad) {
        expect(res.status).toBe(400);
        expect(body.field).toBe(bad);
        expect(await eventCount()).toBe(before);
      } else {
        expect(res.status).toBe(200);
        expect(await eventCount()).toBe(before + 1);
        stored++;
      }
    }
    expect(stored).toBeGreaterThan(20);
    expect(stored).toBeLessThan(100);
  });
});

const FLAT_HEAD = 'order_id,created_at,currency,order_amount,sub_merchant_id,part_amount,customer_reference';

describe('orders door: the flat layout, one row per split part (issue 25)', () => {
  const splitOf = async (orderId: string) => {
    const [e] = await store.readStream(`order-${orderId}`);
    return e?.data as { amount: string; split: unknown[]; createdAt: string; customerReference: string | null };
  };

  it('gathers the rows of one order, together or apart, into one placement with its split', async () => {
    const together = `${FLAT_HEAD}
F-1,2026-01-05T10:00:00Z,EUR,100.00,sm-1,60.00,ref-1
F-1,2026-01-05T10:00:00Z,EUR,100.00,sm-2,40.00,ref-1
F-2,2026-01-05T11:00:00Z,EUR,30.00,,,
`;
    const r = await importOrderFile(store, file('flat-together.csv', together), 'csv', { now: NOW });
    expect(r).toEqual({ ok: true, records: 3, appended: 2, duplicates: 0 });
    expect(await splitOf('F-1')).toEqual({
      orderId: 'F-1',
      amount: '10000',
      currency: 'EUR',
      createdAt: '2026-01-05T10:00:00.000Z',
      split: [
        { subMerchantId: 'sm-1', amount: '6000' },
        { subMerchantId: 'sm-2', amount: '4000' },
      ],
      customerReference: 'ref-1',
    });
    expect((await splitOf('F-2')).split).toEqual([]);
    const [e] = await store.readStream('order-F-1');
    expect(e!.metadata).toMatchObject({ source: 'orders-file', file: 'flat-together.csv', line: 2, lines: [2, 3] });

    // the same orders with their rows apart and in another column order: the same versions (duplicates)
    const apart = `currency,order_id,part_amount,sub_merchant_id,order_amount,created_at,customer_reference
EUR,F-1,40.00,sm-2,100.00,2026-01-05T10:00:00Z,ref-1
EUR,F-2,,,30.00,2026-01-05T11:00:00Z,
EUR,F-1,60.00,sm-1,100.00,2026-01-05T10:00:00Z,ref-1
`;
    const before = await eventCount();
    const again = await importOrderFile(store, file('flat-apart.csv', apart), 'csv', { now: NOW });
    expect(again).toEqual({ ok: true, records: 3, appended: 0, duplicates: 2 });
    expect(await eventCount()).toBe(before);
  });

  it('rows apart give the same order as rows together (a fresh order)', async () => {
    const apart = `${FLAT_HEAD}
G-1,2026-02-01T09:00:00+02:00,UAH,50.00,sm-1,20.00,
G-2,2026-02-01T09:30:00Z,UAH,10.00,,,
G-1,2026-02-01T09:00:00+02:00,UAH,50.00,sm-2,30.00,
`;
    const r = await importOrderFile(store, file('flat-apart-g.csv', apart), 'csv', { now: NOW });
    expect(r).toEqual({ ok: true, records: 3, appended: 2, duplicates: 0 });
    expect(await splitOf('G-1')).toMatchObject({
      amount: '5000',
      createdAt: '2026-02-01T07:00:00.000Z',
      split: [
        { subMerchantId: 'sm-1', amount: '2000' },
        { subMerchantId: 'sm-2', amount: '3000' },
      ],
    });
    const [e] = await store.readStream('order-G-1');
    expect(e!.metadata).toMatchObject({ line: 2, lines: [2, 4] });
    // NDJSON in the flat layout reads the same way
    const nd = [
      {
        order_id: 'G-3',
        created_at: '2026-02-02T00:00:00Z',
        currency: 'UAH',
        order_amount: '7.00',
        sub_merchant_id: 'sm-1',
        part_amount: '3.00',
      },
      { order_id: 'G-4', created_at: '2026-02-02T00:00:00Z', currency: 'UAH', order_amount: '1.00' },
      {
        order_id: 'G-3',
        created_at: '2026-02-02T00:00:00Z',
        currency: 'UAH',
        order_amount: '7.00',
        sub_merchant_id: 'sm-2',
        part_amount: '4.00',
      },
    ]
      .map((o) => JSON.stringify(o))
      .join('\n');
    expect(await importOrderFile(store, file('flat.ndjson', nd), 'ndjson', { now: NOW })).toEqual({
      ok: true,
      records: 3,
      appended: 2,
      duplicates: 0,
    });
    expect((await splitOf('G-3')).split).toEqual([
      { subMerchantId: 'sm-1', amount: '300' },
      { subMerchantId: 'sm-2', amount: '400' },
    ]);
  });

  it.each([
    [
      'inconsistent order totals',
      `${FLAT_HEAD}\nH-1,2026-01-05T10:00:00Z,EUR,100.00,sm-1,60.00,\nH-2,2026-01-05T10:00:00Z,EUR,5.00,,,\nH-1,2026-01-05T10:00:00Z,EUR,90.00,sm-2,30.00,\n`,
      [
        'flat-bad.csv:4 (field order_amount): order H-1: order_amount "90.00" differs from "100.00" at line 2 (every row of an order repeats the order\'s fields)',
      ],
    ],
    [
      'another currency on a row of the order',
      `${FLAT_HEAD}\nH-3,2026-01-05T10:00:00Z,EUR,100.00,sm-1,60.00,\nH-3,2026-01-05T10:00:00Z,USD,100.00,sm-2,30.00,\n`,
      [
        'flat-bad.csv:3 (field currency): order H-3: currency "USD" differs from "EUR" at line 2 (every row of an order repeats the order\'s fields)',
      ],
    ],
    [
      'parts above the order total',
      `${FLAT_HEAD}\nH-4,2026-01-05T10:00:00Z,EUR,10.00,sm-1,6.00,\nH-5,2026-01-05T10:00:00Z,EUR,5.00,,,\nH-4,2026-01-05T10:00:00Z,EUR,10.00,sm-2,6.00,\n`,
      [
        'flat-bad.csv:2 (field part_amount): the parts sum to more than the amount (1200 > 1000 minor units) (order H-4, lines 2, 4)',
      ],
    ],
    [
      'a bad part amount on its own line',
      `${FLAT_HEAD}\nH-6,2026-01-05T10:00:00Z,EUR,10.00,sm-1,6.00,\nH-6,2026-01-05T10:00:00Z,EUR,10.00,sm-2,1.234,\n`,
      ['flat-bad.csv:3 (field part_amount): more than two decimals: 1.234'],
    ],
    [
      'a sub-merchant without its part amount',
      `${FLAT_HEAD}\nH-7,2026-01-05T10:00:00Z,EUR,10.00,sm-1,,\n`,
      [
        'flat-bad.csv:2 (field part_amount): a part needs both sub_merchant_id and part_amount (both empty: a row of the order without a part)',
      ],
    ],
    [
      'one sub-merchant twice in an order, rows apart',
      `${FLAT_HEAD}\nH-8,2026-01-05T10:00:00Z,EUR,10.00,sm-1,2.00,\nH-9,2026-01-05T10:00:00Z,EUR,1.00,,,\nH-8,2026-01-05T10:00:00Z,EUR,10.00,sm-1,3.00,\n`,
      ['flat-bad.csv:2 (field part_amount): sub-merchant sm-1 is given twice (one part each) (order H-8, lines 2, 4)'],
    ],
    [
      'created_at 9999 on the order',
      `${FLAT_HEAD}\nH-10,9999-12-31T23:59:59Z,EUR,10.00,sm-1,2.00,\n`,
      ['flat-bad.csv:2 (field created_at): date 9999-12-31 is after 2036-11-27'],
    ],
    [
      'a NUL in customer_reference',
      `${FLAT_HEAD}\nH-11,2026-01-05T10:00:00Z,EUR,10.00,sm-1,2.00,a\u0000b\n`,
      ['flat-bad.csv:2 (field customer_reference): a NUL character at character 2'],
    ],
    [
      'a column of the other layout',
      `${FLAT_HEAD},split\nH-12,2026-01-05T10:00:00Z,EUR,10.00,sm-1,2.00,,x:1.00\n`,
      [
        'flat-bad.csv:1: unknown column "split" (columns: order_id, amount, currency, created_at, split, customer_reference, amended_at, cancelled_at; or, one row per split part: order_id, created_at, currency, order_amount, sub_merchant_id, part_amount, customer_reference)',
      ],
    ],
  ])('refuses %s naming the lines, and stores nothing', async (_name, text, messages) => {
    const before = await eventCount();
    const r = await importOrderFile(store, file('flat-bad.csv', text), 'csv', { now: NOW });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map(formatOrderIssue)).toEqual(messages);
    expect(await eventCount()).toBe(before);
  });
});

describe('orders door: lines named where the record starts', () => {
  it('counts CRLF, empty lines and line breaks inside quotes', async () => {
    const text =
      'order_id,amount,currency,created_at,customer_reference\r\n' +
      'L-1,1.00,EUR,2026-01-05T10:00:00Z,"quoted\r\nbreak"\r\n' +
      '\r\n' +
      'L-2,1.00,EUR,9999-12-31T23:59:59Z,\r\n';
    const r = await importOrderFile(store, file('lines.csv', text), 'csv', { now: NOW });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.issues.map(formatOrderIssue)).toEqual([
        'lines.csv:2 (field customer_reference): a control character (U+000D) at character 7',
        'lines.csv:5 (field created_at): date 9999-12-31 is after 2036-11-27',
      ]);
  });
});

describe('orders door: bytes that are not UTF-8', () => {
  it.each([
    [
      'csv',
      'order_id,amount,currency,created_at\nU-1,1.00,EUR,2026-01-05T10:00:00Z\nU-2,1.00,EUR,2026-01-05T10:00:00Z,Caf\xe9\n',
    ],
    [
      'ndjson',
      '{"order_id":"U-1","amount":"1.00","currency":"EUR","created_at":"2026-01-05T10:00:00Z"}\n{"order_id":"Caf\xe9"}\n',
    ],
  ] as const)('a %s file is refused naming the line, nothing stored, never read as U+FFFD', async (format, text) => {
    const before = await eventCount();
    const name = `latin1.${format}`;
    const r = await importOrderFile(store, file(name, Buffer.from(text, 'latin1')), format, { now: NOW });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      const lines = r.issues.map(formatOrderIssue);
      expect(lines).toContain(`${name}:${format === 'csv' ? 3 : 2}: not UTF-8 text (save the file as UTF-8)`);
    }
    expect(await eventCount()).toBe(before);
  });
});

describe('orders door: after the corpus', () => {
  it('every projection runs to the head of the store (nothing accepted fails a projection)', async () => {
    const deps = { sql: db.sql, store, log: silentLogger, timezone: 'Europe/Kyiv', graceHours: 48 };
    let report = await runProjections(deps, { batchSize: 500 });
    for (let i = 0; i < 100 && report.projections.some((p) => p.position !== report.head); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      report = await runProjections(deps, { batchSize: 500 });
    }
    expect(report.head).not.toBeNull();
    expect(report.projections.length).toBeGreaterThan(3);
    for (const p of report.projections) expect(p.position, p.name).toBe(report.head);
    // every order version stored is in the orders read model
    const stored = new Set((await store.readAll()).filter((e) => e.stream.startsWith('order-')).map((e) => e.stream));
    const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from recon.orders`;
    expect(row?.n).toBe(stored.size);
  });
});

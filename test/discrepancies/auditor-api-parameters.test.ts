import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditorApi } from '../../src/http/auditor-api';
import { MAX_LIMIT, listDiscrepancies } from '../../src/reconciliation/discrepancy-queries';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendAll, at, periodRow, project, registerRows, syncCompleted, webhook } from './fixtures';

/**
 * The query parameters of the auditor API: a limit PostgreSQL could not take was a 500, and
 * an unknown parameter — a misspelt filter — was ignored, so the answer was every discrepancy as if it had
 * matched. Now the parameters are an allow-list, each given at most once, limit is 1…MAX_LIMIT (also the
 * default page), and offset pages through the rest, announced by a `Link: rel="next"` header.
 */

const TOKEN = 'auditor-token-for-parameter-tests-0123';
const PAYMENTS = ['pay-1', 'pay-2', 'pay-3', 'pay-4', 'pay-5'];
let db: TestDatabase;
let store: EventStore;
let server: Server;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  // one amount_mismatch per payment, an hour apart
  await appendAll(
    store,
    PAYMENTS.flatMap((paymentId, i) => {
      const t = at(`2024-05-10T${String(8 + i).padStart(2, '0')}:00:00Z`);
      return [
        registerRows({
          paymentId,
          dateTime: t,
          amount: 100_00n,
          reportId: 'r1',
          observedAt: at('2024-05-10T20:00:00Z'),
        }),
        periodRow({ paymentId, dateTime: t, amount: 100_00n, reportId: 'r1', observedAt: at('2024-05-10T20:00:00Z') }),
        webhook({ paymentId, processedAt: t, amount: 90_00n, receivedAt: t }),
      ];
    }).concat([
      syncCompleted({
        from: at('2024-05-10T00:00:00Z'),
        to: at('2024-05-11T00:00:00Z'),
        completedAt: at('2024-05-13T00:00:00Z'),
        reportId: 'r1',
      }),
    ]),
  );
  await project(db.sql, store);
  const api = createAuditorApi({ sql: db.sql, token: TOKEN });
  server = createServer((req, res) => {
    void api(req, res).then((handled) => {
      if (!handled) {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await db?.drop();
});

const auth = { authorization: `Bearer ${TOKEN}` };

async function get(pathAndQuery: string): Promise<{ status: number; body: any; link: string | null }> {
  const r = await fetch(`${base}${pathAndQuery}`, { headers: auth });
  return { status: r.status, body: await r.json(), link: r.headers.get('link') };
}

/** A 400 `invalid_filter` whose message names `name`. */
async function refused(pathAndQuery: string, name: string): Promise<void> {
  const r = await get(pathAndQuery);
  expect(r.status, `${pathAndQuery}: ${JSON.stringify(r.body)}`).toBe(400);
  expect(r.body.error).toBe('invalid_filter');
  expect(r.body.message, pathAndQuery).toContain(name);
}

describe('auditor API: limit and offset', () => {
  it("refuses a limit beyond PostgreSQL's bigint, or beyond the documented maximum, as a 400 naming limit (was a 500)", async () => {
    await refused('/api/discrepancies?limit=99999999999999999999', 'limit');
    await refused(`/api/discrepancies?limit=${MAX_LIMIT + 1}`, 'limit');
    await refused(`/api/discrepancies?limit=${'9'.repeat(400)}`, 'limit');
    for (const bad of ['0', '-1', '1.5', 'abc', '', '+3'])
      await refused(`/api/discrepancies?limit=${encodeURIComponent(bad)}`, 'limit');
    expect(MAX_LIMIT).toBe(10_000);
    const most = await get(`/api/discrepancies?limit=${MAX_LIMIT}`);
    expect(most.status).toBe(200);
    expect(most.body).toHaveLength(PAYMENTS.length);
  });

  it('refuses an offset that is not a whole number PostgreSQL takes', async () => {
    await refused('/api/discrepancies?offset=99999999999999999999', 'offset');
    for (const bad of ['-1', 'x', '']) await refused(`/api/discrepancies?offset=${encodeURIComponent(bad)}`, 'offset');
    const past = await get('/api/discrepancies?offset=1000');
    expect(past.status).toBe(200);
    expect(past.body).toEqual([]);
  });

  it('pages with limit and offset, announcing each next page in a Link header, without overlap or gap', async () => {
    const all = await get('/api/discrepancies');
    expect(all.status).toBe(200);
    expect(all.link).toBeNull(); // everything fits in the default page (MAX_LIMIT rows)
    expect(all.body.map((d: { payment_id: string }) => d.payment_id)).toEqual(PAYMENTS);

    const seen: string[] = [];
    let next: string | null = '/api/discrepancies?type=amount_mismatch&limit=2';
    const links: string[] = [];
    while (next) {
      const page = await get(next);
      expect(page.status).toBe(200);
      expect(page.body.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.map((d: { id: string }) => d.id));
      next = page.link === null ? null : /^<([^>]+)>; rel="next"$/.exec(page.link)![1]!;
      if (next) links.push(next);
    }
    expect(links).toEqual([
      '/api/discrepancies?type=amount_mismatch&limit=2&offset=2',
      '/api/discrepancies?type=amount_mismatch&limit=2&offset=4',
    ]);
    expect(seen).toEqual(all.body.map((d: { id: string }) => d.id));
    // a page that ends exactly at the last row has no next link
    expect((await get('/api/discrepancies?limit=5')).link).toBeNull();
    expect((await get('/api/discrepancies?limit=4')).link).toBe('</api/discrepancies?limit=4&offset=4>; rel="next"');
  });

  it("leaves the CLI's listing (no limit) whole", async () => {
    const r = await listDiscrepancies(db.sql, { timezone: 'UTC' });
    expect(r.ok && r.value.map((d) => d.payment_id)).toEqual(PAYMENTS);
    const checked = await listDiscrepancies(db.sql, { timezone: 'UTC', limit: MAX_LIMIT + 1 });
    expect(checked).toMatchObject({ ok: false, code: 'INVALID_FILTER' });
  });
});

describe('auditor API: unknown and repeated parameters', () => {
  it('refuses an unknown (misspelt) parameter, naming it, instead of ignoring it and returning every payment', async () => {
    await refused('/api/discrepancies?payment_id=pay-1', 'payment_id');
    await refused('/api/discrepancies?payment=pay-1&staus=open', 'staus');
    await refused('/api/discrepancies?Payment=pay-1', 'Payment');
    // the documented ones are taken
    const one = await get(
      '/api/discrepancies?payment=pay-1&status=open&type=amount_mismatch&from=2024-05-10&to=2024-05-10&limit=10&offset=0',
    );
    expect(one.status).toBe(200);
    expect(one.body.map((d: { payment_id: string }) => d.payment_id)).toEqual(['pay-1']);
    expect((await get('/api/discrepancies?sub_merchant=sm-x')).body).toEqual([]);
    expect((await get('/api/discrepancies?sub-merchant=sm-x')).body).toEqual([]);
  });

  it('refuses a repeated parameter (which of the values would be meant?)', async () => {
    await refused('/api/discrepancies?payment=pay-1&payment=pay-2', 'payment');
    await refused('/api/discrepancies?limit=1&limit=2', 'limit');
    await refused('/api/discrepancies?sub_merchant=a&sub-merchant=b', 'sub_merchant');
  });

  it('refuses any parameter of /api/operations/:paymentId, which takes none', async () => {
    await refused('/api/operations/pay-1?method=refund', 'method');
    expect((await get('/api/operations/pay-1')).status).toBe(200);
  });
});

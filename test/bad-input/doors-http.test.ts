import { request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditorApi } from '../../src/http/auditor-api';
import { createHttpApp, type HttpApp } from '../../src/http/http-app';
import { createOrdersApi } from '../../src/http/orders-api';
import { asyncRoute } from '../../src/http/routes';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The auditor API and GET /api/orders/:id (issue 23): a NUL in a path or a query, a day out of range, any bad
 * parameter is a 400 naming the parameter (or the path), never a 500; requests sent as raw bytes, so that
 * nothing on the way normalizes them.
 */

const AUDITOR = 'auditor-token-doors-0123456789';
const ORDERS = 'orders-token-doors-0123456789';
let db: TestDatabase;
let store: EventStore;
let app: HttpApp;
let port: number;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  // the views exist: a request that reached a query would run it
  await runProjections({ sql: db.sql, store, log: silentLogger, timezone: 'UTC', graceHours: 48 });
  const auditor = createAuditorApi({ sql: db.sql, token: AUDITOR, timezone: 'Europe/Kyiv' });
  const orders = createOrdersApi({ store, token: ORDERS, sql: db.sql, auditorToken: AUDITOR });
  app = createHttpApp({
    routes: [asyncRoute('/api/orders', orders, silentLogger), asyncRoute('/api', auditor, silentLogger)],
    log: silentLogger,
  });
  port = (await app.listen(0)).port;
});
afterAll(async () => {
  await app?.close({ graceMs: 1000 });
  await store?.close();
  await db?.drop();
});

/** A GET with the path exactly as given (percent escapes and all), answered as status and JSON. */
function get(rawPath: string): Promise<{ status: number; body: { error?: string; message?: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: rawPath, method: 'GET', headers: { authorization: `Bearer ${AUDITOR}` } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const cases: Array<[string, string, number, RegExp]> = [
  ['a NUL in the payment id', '/api/operations/pay%00ment', 400, /^the payment id: a NUL character at character 4$/],
  // a surrogate's UTF-8 bytes (CESU) are not UTF-8: refused as percent-encoding
  [
    'a lone surrogate in the payment id',
    '/api/operations/pay%ED%A0%80',
    400,
    /^the payment id is not valid percent-encoding$/,
  ],
  ['an ANSI escape in the payment id', '/api/operations/%1B%5B31m', 400, /control character \(U\+001B\)/],
  ['an override in the payment id', '/api/operations/a%E2%80%AEb', 400, /bidirectional override/],
  ['a payment id of 300 characters', `/api/operations/${'p'.repeat(300)}`, 400, /longer than 256/],
  ['bad percent-encoding in the payment id', '/api/operations/%E0%A4%A', 400, /not valid percent-encoding/],
  ['a NUL in the order id', '/api/orders/o%00', 400, /^the order id: a NUL character at character 2$/],
  ['an order id of 300 characters', `/api/orders/${'o'.repeat(300)}`, 400, /^the order id: longer than 256/],
  ['from=0000-01-01', '/api/discrepancies?from=0000-01-01', 400, /^from: date 0000-01-01 is before 2000-01-01$/],
  ['to=9999-12-31', '/api/discrepancies?to=9999-12-31', 400, /^to: date 9999-12-31 is after /],
  ['from=+275760-09-13', '/api/discrepancies?from=%2B275760-09-13', 400, /^from: not a date in the form YYYY-MM-DD/],
  ['from=2025-02-30', '/api/discrepancies?from=2025-02-30', 400, /^from: not a day of the calendar/],
  ['from=2025-01-02Tgarbage', '/api/discrepancies?from=2025-01-02Tgarbage', 400, /^from: not a date in the form/],
  [
    'a NUL in from',
    '/api/discrepancies?from=2025-01-01%00',
    400,
    /^from: not a date in the form YYYY-MM-DD: "2025-01-01\\u\{0\}"$/,
  ],
  ['a NUL in payment', '/api/discrepancies?payment=a%00b', 400, /^payment: a NUL character at character 2$/],
  [
    'a NUL in sub_merchant',
    '/api/discrepancies?sub_merchant=%00',
    400,
    /^sub_merchant: a NUL character at character 1$/,
  ],
  ['a NUL in type', '/api/discrepancies?type=x%00', 400, /^type: a NUL character at character 2$/],
  ['a lone surrogate in status', '/api/discrepancies?status=%ED%B0%80', 400, /^status: /],
  [
    'an override in sub-merchant',
    '/api/discrepancies?sub-merchant=%E2%80%AE',
    400,
    /^sub-merchant: a bidirectional override/,
  ],
  ['a NUL in a parameter name', '/api/discrepancies?fr%00om=2025-01-01', 400, /^unknown parameter "fr\\u0000om"/],
  ['limit=0', '/api/discrepancies?limit=0', 400, /^limit: expected a whole number/],
  ['limit=1e3', '/api/discrepancies?limit=1e3', 400, /^limit: expected a whole number/],
  ['offset=-1', '/api/discrepancies?offset=-1', 400, /^offset: expected a whole number/],
  ['offset beyond 2^53', '/api/discrepancies?offset=99999999999999999999', 400, /^offset: expected a whole number/],
  ['from after to', '/api/discrepancies?from=2025-02-01&to=2025-01-01', 400, /^from \(2025-02-01\) is after to/],
  ['an unknown type', '/api/discrepancies?type=nope', 400, /^type: expected one of/],
  ['payment of 300 characters', `/api/discrepancies?payment=${'p'.repeat(300)}`, 400, /^payment: longer than 256/],
  ['an empty payment', '/api/discrepancies?payment=', 400, /^payment: empty$/],
  ['a repeated parameter', '/api/discrepancies?from=2025-01-01&from=2025-01-02', 400, /^from: given 2 times/],
  ['good filters', '/api/discrepancies?from=2025-01-01&to=2025-01-31&payment=p-1', 200, /./],
  ['an unknown but clean payment id', '/api/operations/pay-1', 404, /^no operations of payment pay-1$/],
  ['an unknown but clean order id', '/api/orders/o-1', 404, /^no order o-1$/],
];

describe('auditor API and order lookups: bad parameters are 4xx naming them', () => {
  it.each(cases)('%s', async (_name, rawPath, status, message) => {
    const r = await get(rawPath);
    expect(r.status).toBe(status);
    if (status === 200) expect(Array.isArray(r.body)).toBe(true);
    else expect(r.body.message).toMatch(message);
  });

  it('generated paths and queries of any bytes never get a 5xx (fast-check)', async () => {
    const bytes = fc
      .uint8Array({ maxLength: 12 })
      .map((a) => [...a].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''));
    const target = fc.oneof(
      bytes.map((b) => `/api/operations/x${b}`),
      bytes.map((b) => `/api/orders/x${b}`),
      fc
        .tuple(fc.constantFrom('from', 'to', 'type', 'status', 'sub_merchant', 'payment', 'limit', 'offset'), bytes)
        .map(([k, b]) => `/api/discrepancies?${k}=${b}`),
      fc
        .tuple(fc.integer({ min: -9999, max: 99999 }), fc.integer({ min: 0, max: 13 }))
        .map(([y, m]) => `/api/discrepancies?from=${y}-${String(m).padStart(2, '0')}-01`),
    );
    const samples = fc.sample(target, { numRuns: 150, seed: 2100 });
    const statuses = new Map<number, number>();
    for (const p of samples) {
      const r = await get(p);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      expect(r.status, p).toBeLessThan(500);
      if (r.status === 400)
        expect(r.body.message, p).toMatch(
          /^(the (payment|order) id|from|to|type|status|sub_merchant|payment|limit|offset)\b/,
        );
    }
    expect(statuses.get(400)).toBeGreaterThan(20);
  });
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { createLogger } from '../../src/log';
import { createPspPurchaseClient } from '../../src/psp/purchase-client';
import type { PspClientOptions } from '../../src/psp/transport';
import { isPspError, type PspError } from '../../src/psp/errors';
import type { DirectPurchaseRequest, HostedPurchaseRequest } from '../../src/psp/schemas';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
type Handler = (req: Seen, res: ServerResponse) => void;

let server: Server;
let base: string;
let handler: Handler;
let seen: Seen[];
const open = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(s);
      open.add(res);
      res.on('close', () => open.delete(res));
      handler(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const r of open) r.destroy();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen = [];
  handler = (_q, res) => json(res, 404, { message: 'not found', args: { code: 'NOT_FOUND' } });
});

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const POS = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
const SUB = '0b7f8c1e-1111-4222-8333-444455556666';
const project = (): PspProject => ({
  name: 'test',
  posId: POS,
  baseUrl: base,
  reportUrl: `${base}/report`,
  apiKey: 'pk_test_KEY123',
  apiSecret: 'sk_test_SECRET456',
  endpointsKey: 'ek_test_ENDPOINTS789',
});

const waits: number[] = [];
const client = (o: PspClientOptions = {}) => {
  waits.length = 0;
  return createPspPurchaseClient(project(), {
    timeoutMs: 2000,
    maxRetries: 3,
    outcomeLookupDelayMs: 0,
    sleep: async (ms) => void waits.push(ms),
    random: () => 0.5,
    now: () => new Date('2024-06-15T12:00:00Z'),
    ...o,
  });
};

const record = (over: Record<string, unknown> = {}) => ({
  payment_id: '2f1c7a9e-0000-4000-8000-000000000001',
  order_id: 'o-1',
  transaction_id: 't-1',
  pos_id: POS,
  mode: 'direct',
  method: 'purchase',
  amount: 100.5,
  currency: 'UAH',
  status: 'success',
  status_code: '1000',
  status_description: 'transaction is successful',
  created_at: '2024-06-15T11:59:00.000',
  ...over,
});

const direct = (over: Record<string, unknown> = {}): DirectPurchaseRequest =>
  ({
    pos_id: POS,
    mode: 'direct',
    method: 'purchase',
    amount: '100.50',
    currency: 'UAH',
    description: 'Order 1',
    order_id: 'o-1',
    order_3ds_bypass: 'always',
    cc_number: '4111111111111111',
    exp_month: 12,
    exp_year: 26,
    card_cvv: '123',
    customer_fname: 'I',
    customer_lname: 'P',
    customer_email: 'i@example.com',
    customer_phone: '+380501234567',
    customer_ip: '203.0.113.5',
    split: [
      { amount: '60.25', sub_merchant_id: SUB },
      { amount: '40.25', sub_merchant_id: SUB },
    ],
    ...over,
  }) as DirectPurchaseRequest;

const hosted = (): HostedPurchaseRequest =>
  ({
    pos_id: POS,
    mode: 'hosted',
    method: 'purchase',
    amount: 10,
    currency: 'UAH',
    description: 'Order 2',
    order_id: 'o-2',
    order_3ds_bypass: 'always',
    customer_patronym: 'I',
    customer_email: 'i@example.com',
    customer_phone: '+380501234567',
    split: [{ amount: '10.00', sub_merchant_id: SUB }],
  }) as HostedPurchaseRequest;

async function caught(p: Promise<unknown>): Promise<PspError> {
  try {
    await p;
  } catch (e) {
    if (isPspError(e)) return e;
    throw e;
  }
  throw new Error('expected a PspError');
}

async function all(gen: AsyncGenerator<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

describe('authentication', () => {
  it('sends PAY key:secret and the endpoints key by default', async () => {
    handler = (_q, res) => json(res, 200, record());
    await client().getTransaction('o-1', 'purchase');
    expect(seen[0]!.headers['x-api-auth']).toBe('PAY pk_test_KEY123:sk_test_SECRET456');
    expect(seen[0]!.headers['x-api-key']).toBe('ek_test_ENDPOINTS789');
    expect(seen[0]!.url).toBe(`/api/v1/pos/${POS}/orders/o-1/purchase`);
  });

  it('a signer replaces the default headers', async () => {
    handler = (_q, res) => json(res, 200, record());
    const c = client({
      signer: ({ method, url, body }) => ({
        'X-API-AUTH': `PAY-HMAC-SHA1 pk_test_KEY123:sig(${method} ${new URL(url).pathname} ${body ?? ''})`,
      }),
    });
    await c.getTransaction('o-1', 'void');
    expect(seen[0]!.headers['x-api-auth']).toBe(
      `PAY-HMAC-SHA1 pk_test_KEY123:sig(GET /api/v1/pos/${POS}/orders/o-1/void )`,
    );
    expect(seen[0]!.headers['x-api-key']).toBeUndefined();
  });
});

describe('reads and retries', () => {
  it('returns a payment record with exact amounts', async () => {
    handler = (_q, res) =>
      json(res, 200, '{"payment_id":"p","method":"purchase","status":"success","amount":100.50,"currency":"UAH"}');
    const r = await client().getTransaction('o 1/x', 'purchase');
    expect(r.amount).toEqual({ minor: 10050n, raw: '100.50' });
    expect(seen[0]!.url).toBe(`/api/v1/pos/${POS}/orders/o%201%2Fx/purchase`);
  });

  it('retries a GET on 5xx and 429 with capped, jittered backoff, honouring Retry-After', async () => {
    let n = 0;
    handler = (_q, res) => {
      n++;
      if (n === 1) return json(res, 503, { message: 'busy' });
      if (n === 2) return json(res, 429, { message: 'slow down' }, { 'Retry-After': '7' });
      if (n === 3) return json(res, 502, 'Bad gateway');
      return json(res, 200, [record(), record({ method: 'capture', operation_id: 'op-1' })]);
    };
    const list = await client({ retryBaseMs: 100, retryMaxMs: 150 }).getOrderTransactions('o-1');
    expect(list.map((r) => r.method)).toEqual(['purchase', 'capture']);
    expect(seen).toHaveLength(4);
    // attempt 1: step 100 → 75 with random 0.5; Retry-After 7 s; attempt 3: step capped at 150 → 113
    expect(waits).toEqual([75, 7000, 113]);
  });

  it('gives up after maxRetries with a typed HTTP error carrying the PSP code', async () => {
    handler = (_q, res) => json(res, 500, { message: 'Internal', args: { code: 'E_INTERNAL' } });
    const e = await caught(client({ maxRetries: 2 }).getTransaction('o-1', 'purchase'));
    expect(e).toMatchObject({
      code: 'PSP_HTTP_ERROR',
      status: 500,
      pspCode: 'E_INTERNAL',
      pspMessage: 'Internal',
      attempts: 3,
      endpoint: 'GET /api/v1/pos/:pos_id/orders/:order_id/:operation',
    });
    expect(seen).toHaveLength(3);
  });

  it('does not retry a 4xx; reads the flat error shape too', async () => {
    handler = (_q, res) => json(res, 401, { message: 'Unauthorized', code: 'AUTH' });
    const e = await caught(client().getTransaction('o-1', 'purchase'));
    expect(e).toMatchObject({ code: 'PSP_HTTP_ERROR', status: 401, pspCode: 'AUTH', attempts: 1 });
    expect(seen).toHaveLength(1);
  });

  it('times out and retries, then reports PSP_TIMEOUT', async () => {
    handler = () => undefined; // never answers
    const e = await caught(client({ timeoutMs: 150, maxRetries: 1 }).getTransaction('o-1', 'purchase'));
    expect(e.code).toBe('PSP_TIMEOUT');
    expect(seen).toHaveLength(2);
  });

  it('reports PSP_NETWORK when nothing listens', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const c = createPspPurchaseClient(
      { ...project(), baseUrl: `http://127.0.0.1:${port}` },
      { maxRetries: 0, timeoutMs: 2000 },
    );
    const e = await caught(c.getTransaction('o-1', 'purchase'));
    expect(e.code).toBe('PSP_NETWORK');
    expect(e.message).toMatch(/ECONNREFUSED/);
  });

  it('reports PSP_BAD_RESPONSE naming the field', async () => {
    handler = (_q, res) => json(res, 200, { payment_id: 'p', method: 'purchase', status: 'success', amount: '1.234' });
    const e = await caught(client().getTransaction('o-1', 'purchase'));
    expect(e).toMatchObject({ code: 'PSP_BAD_RESPONSE', field: 'amount' });
    handler = (_q, res) => json(res, 200, 'not json');
    expect((await caught(client().getTransaction('o-1', 'purchase'))).code).toBe('PSP_BAD_RESPONSE');
  });

  it('errors and logs never hold the secret, the keys or card data', async () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'debug', write: (l) => lines.push(l) });
    handler = (q, res) =>
      json(res, 502, {
        message: `echo ${q.headers['x-api-auth']} ${q.headers['x-api-key']} ${q.body}`,
        args: { code: 'E' },
      });
    const e = await caught(client({ log, maxRetries: 1 }).splitPurchase(direct({ card_cvv: '987' })));
    const text = JSON.stringify({ m: e.message, j: e.toJSON(), s: e.stack, f: e.found, lines });
    for (const secret of [
      'sk_test_SECRET456',
      'pk_test_KEY123',
      'ek_test_ENDPOINTS789',
      '4111111111111111',
      '"987"',
      ' 987',
    ])
      expect(text).not.toContain(secret);
    expect(e.pspMessage).toContain('"cc_number":"[redacted]"');
    expect(lines.length).toBeGreaterThan(0);
  });
});

describe('purchases: never blindly repeated', () => {
  it('direct: sends exact JSON numbers and returns the record', async () => {
    handler = (_q, res) => json(res, 200, record());
    const r = await client().splitPurchase(direct());
    expect(r.kind).toBe('direct');
    const body = seen[0]!.body;
    expect(body).toContain('"amount":100.50');
    expect(body).toContain('"split":[{"amount":60.25,');
    expect(seen[0]!.headers['content-type']).toBe('application/json');
  });

  it('hosted: returns the 303 Location', async () => {
    handler = (_q, res) => {
      res.writeHead(303, { Location: '/api/v1/checkout/chk-1/form' });
      res.end();
    };
    expect(await client().splitPurchase(hosted())).toEqual({
      kind: 'hosted',
      location: `${base}/api/v1/checkout/chk-1/form`,
    });
  });

  it('after a 5xx, looks the order up once instead of re-sending, and returns what it finds', async () => {
    handler = (q, res) =>
      q.method === 'POST'
        ? json(res, 500, { message: 'oops' })
        : json(res, 200, [record({ status: 'pending', status_code: '2122' })]);
    const r = await client().splitPurchase(direct());
    expect(r).toMatchObject({ kind: 'direct', record: { status: 'pending', status_code: '2122' } });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'POST /api/v1/split/purchase',
      `GET /api/v1/pos/${POS}/orders/o-1`,
    ]);
  });

  it('after a timeout with nothing found: PSP_OUTCOME_UNKNOWN, one POST only', async () => {
    handler = (q, res) =>
      q.method === 'POST' ? undefined : json(res, 404, { message: 'Order not found', args: { code: 'NOT_FOUND' } });
    const e = await caught(client({ timeoutMs: 200 }).splitPurchase(direct()));
    expect(e).toMatchObject({ code: 'PSP_OUTCOME_UNKNOWN', found: [] });
    expect(seen.filter((s) => s.method === 'POST')).toHaveLength(1);
  });

  it('hosted order found after a 5xx: outcome unknown with the records (no checkout address)', async () => {
    handler = (q, res) =>
      q.method === 'POST' ? json(res, 503, {}) : json(res, 200, [record({ mode: 'hosted', status: 'init' })]);
    const e = await caught(client().splitPurchase(hosted()));
    expect(e.code).toBe('PSP_OUTCOME_UNKNOWN');
    expect(e.found).toHaveLength(1);
  });

  it('a 4xx is returned as is, without look-up', async () => {
    handler = (_q, res) => json(res, 400, { message: 'bad split', args: { code: 'SPLIT' } });
    const e = await caught(client().splitPurchase(direct()));
    expect(e).toMatchObject({ code: 'PSP_HTTP_ERROR', status: 400, pspCode: 'SPLIT' });
    expect(seen).toHaveLength(1);
  });

  it('refuses an invalid request before sending', async () => {
    const e = await caught(client().splitPurchase(direct({ cc_number: '4111111111111112' })));
    expect(e.code).toBe('PSP_VALIDATION');
    expect(e.violations.map((v) => v.field)).toEqual(['cc_number']);
    expect(seen).toHaveLength(0);
  });

  it('subscription purchase: POST /api/v1/payment → Location', async () => {
    handler = (_q, res) => {
      res.writeHead(303, { Location: `${base}/api/v1/checkout/chk-2/form` });
      res.end();
    };
    const r = await client().purchaseWithSubscription({
      ...hosted(),
      split: undefined,
      init_recurring: { interval_unit: 'month', interval_count: 1, amount: '9.99' },
    });
    expect(r.location).toBe(`${base}/api/v1/checkout/chk-2/form`);
    expect(seen[0]!.url).toBe('/api/v1/payment');
    expect(seen[0]!.body).toContain('"init_recurring":{"interval_unit":"month","interval_count":1,"amount":9.99}');
  });
});

describe('register report', () => {
  const from = new Date('2024-05-31T21:00:00.000Z');
  const to = new Date('2024-07-01T21:00:00.000Z'); // 31 days

  it('starts with ISO dates with offset and the requested fields; a 5xx is retried', async () => {
    let n = 0;
    handler = (_q, res) => (++n === 1 ? json(res, 503, {}) : json(res, 200, { report_id: 'rep-1', count: 3 }));
    const r = await client().startRegisterReport({
      from,
      to,
      statuses: ['success'],
      transactionDetails: ['paymentId', 'receiverAmount'],
    });
    expect(r).toEqual({ reportId: 'rep-1', count: 3 });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.url).toBe('/report/streaming-report/start');
    expect(JSON.parse(seen[1]!.body)).toEqual({
      project_id: POS,
      start_date: '2024-05-31T21:00:00.000+00:00',
      end_date: '2024-07-01T20:59:59.999+00:00',
      statuses: ['success'],
      transaction_details: ['paymentId', 'receiverAmount'],
    });
  });

  it('refuses a period over 31 days locally', async () => {
    const e = await caught(client().startRegisterReport({ from, to: new Date(to.getTime() + 1) }));
    expect(e).toMatchObject({ code: 'PSP_VALIDATION', violations: [{ field: 'end_date' }] });
    expect(seen).toHaveLength(0);
  });

  it('fetch: not ready (with 200 or an error status), then the records exactly', async () => {
    handler = (_q, res) => json(res, 200, { message: 'Report is not ready', code: 'report_not_ready' });
    expect(await client().fetchRegisterReport('rep-1')).toEqual({ ready: false });
    handler = (_q, res) => json(res, 404, { message: 'Report is not ready', code: 'report_not_ready' });
    expect(await client().fetchRegisterReport('rep-1')).toEqual({ ready: false });
    expect(seen[0]!.url).toBe('/report/streaming-report/fetch/rep-1');
    handler = (_q, res) => json(res, 200, '[{"paymentId":"a","amount":1.10},\n{"paymentId":"b","amount":"2.00"}]');
    const r = await client().fetchRegisterReport('rep-1');
    expect(r.ready && (await all(r.records))).toEqual([
      '{"paymentId":"a","amount":1.10}',
      '{"paymentId":"b","amount":"2.00"}',
    ]);
  });

  it('fetch: a large report is streamed in chunks, wrapped in an object', async () => {
    const rec = (i: number) => `{"paymentId":"p-${i}","amount":"${i}.00","receiverName":"Магазин ${i}"}`;
    handler = (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"count":5000,"records":[');
      let i = 0;
      const more = () => {
        while (i < 5000) {
          const ok = res.write((i > 0 ? ',' : '') + rec(i));
          i++;
          if (!ok) return void res.once('drain', more);
        }
        res.end(']}');
      };
      more();
    };
    const r = await client().fetchRegisterReport('rep-2');
    if (!r.ready) throw new Error('expected ready');
    const got = await all(r.records);
    expect(got).toHaveLength(5000);
    expect(got[4321]).toBe(rec(4321));
  });

  it('fetch: a stream that stalls is cut by the idle timeout; a truncated one is a bad response', async () => {
    handler = (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('[{"paymentId":"a"},');
    };
    // The peek reads the first 64 KiB, so here the fetch itself meets the silence.
    const e = await caught(
      (async () => {
        const r = await client({ timeoutMs: 200, maxRetries: 0 }).fetchRegisterReport('rep-3');
        return r.ready ? all(r.records) : [];
      })(),
    );
    expect(e.code).toBe('PSP_TIMEOUT');
    handler = (_q, res) => json(res, 200, '[{"paymentId":"a"},{"payme');
    const t = await client().fetchRegisterReport('rep-4');
    const e2 = await caught((async () => (t.ready ? all(t.records) : []))());
    expect(e2.code).toBe('PSP_BAD_RESPONSE');
    expect(e2.message).toMatch(/truncated/);
  });
});

describe('other endpoints', () => {
  it('period transactions: startDate/enddate in ms, [from, to) sent as to − 1 ms', async () => {
    handler = (_q, res) => json(res, 200, '[{"paymentId":"a","amount":"1.00","dateTime":""}]');
    const got = await all(client().periodTransactions(new Date(1_717_200_000_000), new Date(1_717_286_400_000)));
    expect(got).toEqual(['{"paymentId":"a","amount":"1.00","dateTime":""}']);
    expect(seen[0]!.url).toBe(`/api/v1/pos/${POS}/transactions?startDate=1717200000000&enddate=1717286399999`);
    await all(
      client({ periodEnd: 'exclusive' }).periodTransactions(new Date(1_717_200_000_000), new Date(1_717_286_400_000)),
    );
    expect(seen[1]!.url).toContain('enddate=1717286400000');
  });

  it('cancel: POST to the singular order path without body, answers an array', async () => {
    handler = (_q, res) =>
      json(res, 200, [
        record({
          mode: 'hosted',
          status: 'failure',
          status_code: '6007',
          gateway_order_id: null,
          eci: null,
          mcc: null,
          cc_mask: null,
          user_action_url: null,
        }),
      ]);
    const list = await client().cancelPayment('o-2');
    expect(list[0]).toMatchObject({ status: 'failure', status_code: '6007' });
    expect(seen[0]).toMatchObject({ method: 'POST', url: `/api/v1/pos/${POS}/order/o-2/cancel`, body: '' });
  });

  it('re-send webhook with and without transactionId', async () => {
    handler = (_q, res) => json(res, 200, record({ recurring: { id: 'r-1', status: 'active' } }));
    const r = await client().resendWebhook('o-1', 'purchase', { transactionId: 't-9' });
    expect(r?.recurring?.id).toBe('r-1');
    expect(seen[0]!.url).toBe(`/api/v1/pos/${POS}/orders/o-1/purchase?callback=true&transactionId=t-9`);
    await client().resendWebhook('o-1', 'refund');
    expect(seen[1]!.url).toBe(`/api/v1/pos/${POS}/orders/o-1/refund?callback=true`);
  });

  it('subscription transactions: method and status in the query, body as plain JSON', async () => {
    handler = (_q, res) => json(res, 200, '[{"payment_id":"p","amount":12.50}]');
    const body = await client().getSubscriptionTransactions('r-1', { method: 'purchase', status: 'success' });
    expect(body).toEqual([{ payment_id: 'p', amount: 12.5 }]);
    expect(seen[0]!.url).toBe(`/api/v1/pos/${POS}/recurring/r-1?method=purchase&status=success`);
  });
});

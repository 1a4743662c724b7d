import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { createPspPurchaseClient } from '../../src/psp/purchase-client';
import { isPspError } from '../../src/psp/errors';
import type { DirectPurchaseRequest } from '../../src/psp/schemas';

/**
 * Edges of outgoing requests: an amount written with a leading zero, a card number the PSP
 * echoes in another form than it was sent, order ids that are dot segments of a URL.
 */

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
let server: Server;
let base: string;
let seen: Seen[];
let handler: (q: Seen, res: ServerResponse) => void;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen = [];
  handler = (_q, res) => json(res, 404, { message: 'not found' });
});

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
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
const client = () =>
  createPspPurchaseClient(project(), {
    timeoutMs: 2000,
    maxRetries: 1,
    outcomeLookupDelayMs: 0,
    sleep: async () => {},
    random: () => 0.5,
    now: () => new Date('2024-06-15T12:00:00Z'),
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
    split: [{ amount: '100.50', sub_merchant_id: SUB }],
    ...over,
  }) as DirectPurchaseRequest;

async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await p };
  } catch (e) {
    return e;
  }
}

describe('psp client: outgoing amounts', () => {
  it('an amount with a leading zero that validation accepts ("012.50") is sent as 12.50, exactly (a plain Error from the JSON writer)', async () => {
    await outcome(
      client().splitPurchase(direct({ amount: '012.50', split: [{ amount: '012.50', sub_merchant_id: SUB }] })),
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body).toContain('"amount":12.50,');
    expect(seen[0]!.body).toContain('"split":[{"amount":12.50,');
  });
});

describe('psp client: card data in PSP error text', () => {
  it('a 12-digit card number (accepted by validation) sent with spaces and echoed without them is not kept in the error', async () => {
    handler = (q, res) => {
      const sent = JSON.parse(q.body) as { cc_number: string };
      json(res, 400, { message: `card ${sent.cc_number.replace(/\D/g, '')} declined`, code: 'CARD_DECLINED' });
    };
    const e = await outcome(client().splitPurchase(direct({ cc_number: '5000 0000 0009' })));
    expect(isPspError(e)).toBe(true);
    const err = e as Error & { pspMessage?: string };
    expect(err.message).not.toContain('500000000009');
    expect(err.pspMessage ?? '').not.toContain('500000000009');
    expect(JSON.stringify(err)).not.toContain('500000000009');
  });
});

describe('psp client: order ids in paths', () => {
  it('cancelPayment("..") does not POST to another endpoint (dot segment collapsed by URL)', async () => {
    handler = (_q, res) => json(res, 200, []);
    await outcome(client().cancelPayment('..'));
    expect(seen.length === 0 || seen[0]!.url.includes('/order/')).toBe(true);
  });

  it('resendWebhook(".", "purchase") does not GET the order list endpoint', async () => {
    handler = (_q, res) => json(res, 200, {});
    await outcome(client().resendWebhook('.', 'purchase'));
    expect(seen.length === 0 || /\/orders\/[^/]+\/purchase/.test(seen[0]!.url)).toBe(true);
  });
});

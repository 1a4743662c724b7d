import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { normalizedWebhook } from '../../src/events/ingest-events';
import { loadConfig, type PspProject } from '../../src/config/env';
import { createPspPurchaseClient } from '../../src/psp/purchase-client';
import { isPspError, type PspError } from '../../src/psp/errors';
import { parseWebhookPayload } from '../../src/psp/parse';
import type { DirectPurchaseRequest } from '../../src/psp/schemas';

/**
 * What the PSP's own material (public plugins, SDKs, docs) shows and recon must take: error bodies with a list
 * of violations, a fee given as a number, card fields as real clients send them, ids whose variant digit is not
 * RFC 9562, and an authentication scheme other than PAY.
 */

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  body: string;
}
let server: Server;
let base: string;
let seen: Seen[];
let answer: (res: ServerResponse) => void;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers['x-api-auth'] as string, body });
      answer(res);
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
});

const reply = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

// The variant digit (the first of the fourth group) is 1: not an RFC 9562 id, as in the PSP's docs.
const POS = '6b1d2a4e-7c0f-4f51-1d3e-1a2b3c4d5e6f';
const SUB = '0b7f8c1e-1111-4222-0333-444455556666';
const project = (over: Partial<PspProject> = {}): PspProject => ({
  name: 'test',
  posId: POS,
  baseUrl: base,
  reportUrl: `${base}/report`,
  apiKey: 'pk_KEY',
  apiSecret: 'sk_SECRET',
  endpointsKey: 'ek_KEY',
  ...over,
});
const client = (over: Partial<PspProject> = {}) =>
  createPspPurchaseClient(project(over), {
    timeoutMs: 2000,
    maxRetries: 0,
    now: () => new Date('2024-06-15T12:00:00Z'),
  });

async function caught(p: Promise<unknown>): Promise<PspError> {
  try {
    await p;
  } catch (e) {
    if (isPspError(e)) return e;
    throw e;
  }
  throw new Error('expected a PspError');
}

describe('error bodies as the PSP sends them', () => {
  it('args as a list of { field_name, violation }: message kept, code from `code`, violations in the error', async () => {
    answer = reply(400, {
      message: 'Validation failed',
      code: 'VALIDATION_ERROR',
      args: [
        { field_name: 'customer_email', violation: 'must be a well-formed email address' },
        { field_name: 'split.0.amount', violation: 'must be positive' },
      ],
    });
    const e = await caught(client().getTransaction('o-1', 'purchase'));
    expect(e).toMatchObject({ status: 400, pspCode: 'VALIDATION_ERROR', pspMessage: 'Validation failed' });
    expect(e.pspViolations).toEqual([
      'customer_email: must be a well-formed email address',
      'split.0.amount: must be positive',
    ]);
    expect(e.message).toBe(
      'PSP answered 400 on GET /api/v1/pos/:pos_id/orders/:order_id/:operation (VALIDATION_ERROR): Validation failed: ' +
        'customer_email: must be a well-formed email address; split.0.amount: must be positive',
    );
    expect(e.toJSON()).toMatchObject({ pspViolations: e.pspViolations });
  });

  it('args as a list of strings: message kept and the sentences joined', async () => {
    answer = reply(422, { message: 'Bad request', args: ['amount is required', 'currency is not supported'] });
    const e = await caught(client().getTransaction('o-1', 'purchase'));
    expect(e).toMatchObject({ status: 422, pspMessage: 'Bad request', pspCode: undefined });
    expect(e.message).toMatch(/: Bad request: amount is required; currency is not supported$/);
  });

  it('args as an object keeps giving the code (args.code first), and an odd part loses nothing else', async () => {
    answer = reply(404, { message: 'Order not found', code: 'IGNORED', args: { code: 'NOT_FOUND' } });
    expect(await caught(client().getTransaction('o-1', 'purchase'))).toMatchObject({
      pspCode: 'NOT_FOUND',
      pspMessage: 'Order not found',
    });
    answer = reply(400, { message: 'Refused', code: 'E1', args: { code: true } });
    expect(await caught(client().getTransaction('o-1', 'purchase'))).toMatchObject({
      pspCode: 'E1',
      pspMessage: 'Refused',
    });
  });
});

describe('webhook fee given as a number', () => {
  const body = (fee: unknown) =>
    JSON.stringify({
      payment_id: 'pay-1',
      order_id: 'o-1',
      transaction_id: 't-1',
      pos_id: POS,
      mode: 'direct',
      method: 'purchase',
      amount: 100.5,
      currency: 'UAH',
      status: 'success',
      status_code: '1000',
      fee,
      created_at: '2024-05-01T10:00:00.000',
      processed_at: '2024-05-01T10:00:05.250',
    });
  const now = new Date('2024-06-01T00:00:00Z');

  it('is read as the total fee in the webhook currency, exactly', () => {
    const r = parseWebhookPayload(body(2.01), { now });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toMatchObject({ fee: '201', feeCurrency: 'UAH' });
    expect(normalizedWebhook.parse(r.value)).toEqual(r.value);
    const exact = parseWebhookPayload(body(2.01), { now, exactOnly: true });
    expect(exact).toEqual(r);
  });

  it('the object form is read as before; a fee that is neither is refused naming the field', () => {
    const r = parseWebhookPayload(body({ amount: 2.01, currency: 'UAH' }), { now });
    expect(r.ok && r.value.fee).toBe('201');
    for (const bad of ['2.01', -1, 2.001, true]) {
      const x = parseWebhookPayload(body(bad), { now });
      expect(x.ok, JSON.stringify(bad)).toBe(false);
      if (!x.ok) expect(x.field).toMatch(/^fee/);
    }
  });
});

describe('outgoing card fields', () => {
  it('exp_month and exp_year as JSON integers, cc_number digits only', async () => {
    answer = reply(400, { message: 'stop here' });
    const req = {
      pos_id: POS,
      mode: 'direct',
      method: 'purchase',
      amount: '100.50',
      currency: 'UAH',
      description: 'Order 1',
      order_id: 'o-1',
      order_3ds_bypass: 'always',
      cc_number: '4111 1111-1111 1111',
      exp_month: '09',
      exp_year: '27',
      card_cvv: '123',
      customer_fname: 'I',
      customer_lname: 'P',
      customer_email: 'i@example.com',
      customer_phone: '+380501234567',
      customer_ip: '203.0.113.5',
      split: [{ amount: '100.50', sub_merchant_id: SUB }],
    } as unknown as DirectPurchaseRequest;
    await caught(client().splitPurchase(req));
    const sent = seen.find((s) => s.method === 'POST')!;
    expect(sent.body).toContain('"cc_number":"4111111111111111"');
    expect(sent.body).toContain('"exp_month":9,');
    expect(sent.body).toContain('"exp_year":27,');
    const parsed = JSON.parse(sent.body) as Record<string, unknown>;
    expect([typeof parsed.exp_month, typeof parsed.exp_year]).toEqual(['number', 'number']);
  });
});

describe('ids and the authentication scheme', () => {
  const psp = {
    PSP_BASE_URL: 'https://api.psp.example',
    PSP_REPORT_URL: 'https://report.psp.example',
    PSP_POS_ID: POS,
    PSP_API_KEY: 'pk',
    PSP_API_SECRET: 'sk',
    PSP_ENDPOINTS_KEY: 'ek',
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-psp-material-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('PSP_POS_ID and RECON_CONFIG posIds take any 8-4-4-4-12 hex id; other text is refused', () => {
    const r = loadConfig(psp);
    expect(r.ok && r.config.projects[0]!.posId).toBe(POS);
    const file = path.join(dir, 'projects.json');
    writeFileSync(
      file,
      JSON.stringify({
        projects: [
          {
            name: 'live',
            posId: 'ABCDEF01-2345-6789-cdef-0123456789ab',
            baseUrl: 'https://api.psp.example',
            reportUrl: 'https://report.psp.example',
            apiKey: 'k',
            apiSecret: 's',
            endpointsKey: 'e',
          },
        ],
      }),
    );
    const f = loadConfig({ RECON_CONFIG: file });
    expect(f.ok && f.config.projects[0]!.posId).toBe('ABCDEF01-2345-6789-cdef-0123456789ab');
    const bad = loadConfig({ ...psp, PSP_POS_ID: '6b1d2a4e-7c0f-4f51-1d3e-1a2b3c4d5e6g' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.issues.map((i) => i.variable)).toEqual(['PSP_POS_ID']);
  });

  it('PSP_AUTH_SCHEME: PAY by default, configurable, a RECON_CONFIG project may give its own, spaces refused', async () => {
    const d = loadConfig(psp);
    expect(d.ok && d.config.projects[0]!.authScheme).toBe('PAY');
    const c = loadConfig({ ...psp, PSP_AUTH_SCHEME: 'PAYV2' });
    if (!c.ok) throw new Error(JSON.stringify(c.issues));
    expect(c.config.projects[0]!.authScheme).toBe('PAYV2');
    const bad = loadConfig({ ...psp, PSP_AUTH_SCHEME: 'PAY V2' });
    expect(!bad.ok && bad.issues.map((i) => i.variable)).toEqual(['PSP_AUTH_SCHEME']);

    answer = reply(200, '[]');
    await client({ authScheme: 'PAYV2' }).getOrderTransactions('o-1');
    await client({}).getOrderTransactions('o-1');
    expect(seen.map((s) => s.auth)).toEqual(['PAYV2 pk_KEY:sk_SECRET', 'PAY pk_KEY:sk_SECRET']);

    const file = path.join(dir, 'schemes.json');
    const p = {
      baseUrl: 'https://api.psp.example',
      reportUrl: 'https://report.psp.example',
      apiKey: 'k',
      apiSecret: 's',
      endpointsKey: 'e',
    };
    writeFileSync(
      file,
      JSON.stringify({
        projects: [
          { ...p, name: 'a', posId: '11111111-1111-1111-1111-111111111111', authScheme: 'TOKEN' },
          { ...p, name: 'b', posId: '22222222-2222-2222-2222-222222222222' },
        ],
      }),
    );
    const f = loadConfig({ RECON_CONFIG: file, PSP_AUTH_SCHEME: 'PAYV2' });
    if (!f.ok) throw new Error(JSON.stringify(f.issues));
    expect(f.config.projects.map((x) => x.authScheme)).toEqual(['TOKEN', 'PAYV2']);
  });
});

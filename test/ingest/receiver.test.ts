import { describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connect';
import { WebhookReceived, paymentStream, rejectionStream } from '../../src/events/ingest-events';
import { createHttpApp, type HttpApp } from '../../src/http/http-app';
import { createRejectionLimiter } from '../../src/http/rate-limit';
import { createWebhookReceiver, type ReceiverDeps, type WebhookReceiver } from '../../src/http/receiver';
import { encodeBase64Url, sign } from '../../src/psp/signature';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore, Position } from '../../src/store/types';
import { createTestDatabase, useTestStore } from '../support/db';
import { storeEventAheadOfCounter } from '../support/logical-restore';
import { POS_ID, SECRET, capturingLogger, formOf, post, project, purchaseWebhook } from './helpers';

const fx = useTestStore();

const options = { allowedIps: [] as string[], trustProxy: false, maxBodyBytes: 65_536 };

async function start(
  over: Partial<ReceiverDeps> = {},
): Promise<{ app: HttpApp; receiver: WebhookReceiver; url: string; lines: string[] }> {
  const { log, lines } = capturingLogger();
  const receiver = createWebhookReceiver({ store: fx.store, projects: [project], log, options, ...over });
  const app = createHttpApp({ routes: [receiver.handle], log });
  const { url } = await app.listen(0);
  return { app, receiver, url, lines };
}

async function allEvents() {
  const out = [];
  let from: Position | undefined;
  for (;;) {
    const batch = await fx.store.readAll(from, { maxCount: 1000 });
    if (!batch.length) return out;
    out.push(...batch);
    from = batch[batch.length - 1]!.position;
  }
}

describe('webhook receiver', () => {
  it('stores a valid webhook before answering 200, keeps unknown fields, and treats a repeat as a no-op', async () => {
    const { app, url } = await start();
    try {
      const body = purchaseWebhook({ brand_new_field: { nested: [1, 2] } });
      const form = formOf(body);
      const first = await post(`${url}/webhooks/${POS_ID}`, form);
      expect(first.status).toBe(200);
      const stream = paymentStream(POS_ID, body.payment_id as string);
      const after1 = await fx.store.readStream(stream);
      expect(after1).toHaveLength(1);
      expect(after1[0]!.type).toBe(WebhookReceived.type);
      const data = after1[0]!.data as {
        raw: string;
        webhook: { amount: string; fee: string; kind: string; other: Record<string, unknown> };
      };
      expect(data.raw).toBe(JSON.stringify(body));
      expect(data.webhook.amount).toBe('10050');
      expect(data.webhook.fee).toBe('250');
      expect(data.webhook.kind).toBe('primary');
      expect(data.webhook.other.brand_new_field).toEqual({ nested: [1, 2] });
      expect(after1[0]!.metadata).toMatchObject({ source: 'webhook', remoteAddress: '127.0.0.1' });

      // The PSP delivers the same webhook again (6.1.4): answered 200, nothing new stored.
      const again = await post(`${url}/webhooks/${POS_ID}`, form);
      expect(again.status).toBe(200);
      expect(await fx.store.readStream(stream)).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('stores webhooks that arrive out of order (refund before its purchase) and concurrent duplicates once', async () => {
    const { app, url } = await start();
    try {
      const purchase = purchaseWebhook();
      const refund = {
        ...purchaseWebhook({ payment_id: purchase.payment_id, order_id: purchase.order_id }),
        method: 'refund',
        operation_id: 'op-1',
        amount: 20,
        receipt_url: 'https://r',
      };
      const refundForm = formOf(refund);
      const purchaseForm = formOf(purchase);
      const answers = await Promise.all([
        post(`${url}/webhooks/${POS_ID}`, refundForm),
        post(`${url}/webhooks/${POS_ID}`, refundForm),
        post(`${url}/webhooks/${POS_ID}`, refundForm),
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect((await post(`${url}/webhooks/${POS_ID}`, purchaseForm)).status).toBe(200);
      const events = await fx.store.readStream(paymentStream(POS_ID, purchase.payment_id as string));
      expect(events.map((e) => (e.data as { webhook: { method: string } }).webhook.method)).toEqual([
        'refund',
        'purchase',
      ]);
    } finally {
      await app.close();
    }
  });

  it('recognises a recurring notification by its recurring object', async () => {
    const { app, url } = await start();
    try {
      const body = purchaseWebhook({ recurring: { id: 'sub-42', status: 'active' } });
      expect((await post(`${url}/webhooks/${POS_ID}`, formOf(body))).status).toBe(200);
      const [e] = await fx.store.readStream(paymentStream(POS_ID, body.payment_id as string));
      expect((e!.data as { webhook: { kind: string; recurringId: string } }).webhook).toMatchObject({
        kind: 'recurring',
        recurringId: 'sub-42',
      });
    } finally {
      await app.close();
    }
  });

  it('serves its counters at /metrics: JSON, or Prometheus text to a scraper', async () => {
    const { app, url } = await start();
    try {
      expect((await post(`${url}/webhooks/${POS_ID}`, formOf(purchaseWebhook()))).status).toBe(200);
      expect((await post(`${url}/webhooks/${POS_ID}`, new URLSearchParams({ data: 'x' }).toString())).status).toBe(401);
      const json = await fetch(`${url}/metrics`);
      expect(json.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await json.json()) as { webhooks: unknown }).webhooks).toMatchObject({
        received: 2,
        accepted: 1,
        unauthorized: 1,
        tooLarge: 0,
      });
      // the Accept header Prometheus sends when it scrapes
      const scraped = await fetch(`${url}/metrics`, {
        headers: { accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' },
      });
      expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await scraped.text();
      expect(text).toContain('# TYPE recon_webhooks_total counter\n');
      const samples = Object.fromEntries(
        text
          .split('\n')
          .filter((l) => l && !l.startsWith('#'))
          .map((l) => l.split(' ') as [string, string]),
      );
      expect(samples).toMatchObject({
        recon_webhooks_received_total: '2',
        'recon_webhooks_total{outcome="accepted"}': '1',
        'recon_webhooks_total{outcome="unauthorized"}': '1',
        'recon_webhooks_total{outcome="too_large"}': '0',
      });
      expect(Object.keys(samples)).toHaveLength(10);
      expect(await (await fetch(`${url}/metrics?format=prometheus`)).text()).toBe(text);
    } finally {
      await app.close();
    }
  });

  it('refuses wrong and missing signatures with 401, stores nothing, counts them and never logs the secret', async () => {
    const { app, url, receiver, lines } = await start();
    try {
      const before = (await allEvents()).length;
      const body = purchaseWebhook();
      const data = encodeBase64Url(JSON.stringify(body));
      const wrong = await post(
        `${url}/webhooks/${POS_ID}`,
        new URLSearchParams({ data, signature: sign('another-secret', data) }).toString(),
      );
      const missing = await post(`${url}/webhooks/${POS_ID}`, new URLSearchParams({ data }).toString());
      const tampered = await post(
        `${url}/webhooks/${POS_ID}`,
        new URLSearchParams({
          data: encodeBase64Url(JSON.stringify({ ...body, amount: 1 })),
          signature: sign(SECRET, data),
        }).toString(),
      );
      expect([wrong.status, missing.status, tampered.status]).toEqual([401, 401, 401]);
      expect(JSON.parse(missing.body).error).toBe('signature missing');
      expect((await allEvents()).length).toBe(before);
      expect(receiver.metrics().unauthorized).toBe(3);
      expect(lines.some((l) => l.includes('webhook rejected') && l.includes('signature'))).toBe(true);
      expect(lines.join('\n')).not.toContain(SECRET);
    } finally {
      await app.close();
    }
  });

  it('answers 400 with a reason for malformed form, base64, JSON and payload, recording signed bad payloads as rejections', async () => {
    const { app, url } = await start();
    try {
      const at = `${url}/webhooks/${POS_ID}`;
      const notForm = await post(at, JSON.stringify(purchaseWebhook()));
      expect(notForm.status).toBe(400);
      expect(JSON.parse(notForm.body).error).toMatch(/malformed form/);
      const noData = await post(at, 'signature=abc');
      expect(noData.status).toBe(400);
      const wrongType = await post(at, formOf(purchaseWebhook()), { 'content-type': 'application/json' });
      expect(wrongType.status).toBe(400);

      const signed = (data: string) => new URLSearchParams({ data, signature: sign(SECRET, data) }).toString();
      const badBase64 = await post(at, signed('abc$def'.replace('$', '.')));
      expect(badBase64.status).toBe(400);
      expect(JSON.parse(badBase64.body).error).toMatch(/base64/);
      const badJson = await post(at, signed(encodeBase64Url('{"payment_id": "x", ')));
      expect(badJson.status).toBe(400);
      const badAmount = await post(at, formOf(purchaseWebhook({ amount: '12.345' })));
      expect(badAmount.status).toBe(400);
      expect(JSON.parse(badAmount.body).error).toMatch(/^amount/);

      const rejected = await fx.store.readStream(rejectionStream(POS_ID));
      const fields = rejected.map((e) => (e.data as { source: string; field: string }).field);
      expect(rejected.every((e) => (e.data as { source: string }).source === 'webhook')).toBe(true);
      expect(fields).toContain('data');
      expect(fields).toContain('(root)');
      expect(fields).toContain('amount');
      expect(rejected.some((e) => (e.data as { raw: string }).raw.includes('12.345'))).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('answers 413 over the body limit, 404 for an unknown pos_id, 405 for GET', async () => {
    const { app, url } = await start({ options: { ...options, maxBodyBytes: 2048 } });
    try {
      const big = formOf(purchaseWebhook({ description: 'x'.repeat(4000) }));
      expect((await post(`${url}/webhooks/${POS_ID}`, big)).status).toBe(413);
      expect(
        (await post(`${url}/webhooks/00000000-0000-4000-8000-000000000000`, formOf(purchaseWebhook()))).status,
      ).toBe(404);
      expect((await fetch(`${url}/webhooks/${POS_ID}`)).status).toBe(405);
    } finally {
      await app.close();
    }
  });

  it('answers 503 when the store is unavailable so that the PSP delivers again, and readyz says so', async () => {
    const dead = connect('postgres://recon@127.0.0.1:1/none', { max: 1 });
    const deadStore = createPostgresEventStore(dead);
    const { app, url } = await start({ store: deadStore });
    try {
      const r = await post(`${url}/webhooks/${POS_ID}`, formOf(purchaseWebhook()));
      expect(r.status).toBe(503);
      expect((await fetch(`${url}/readyz`)).status).toBe(503);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      await app.close();
      await dead.end({ timeout: 1 });
    }
    const { app: ok, url: okUrl } = await start();
    try {
      expect((await fetch(`${okUrl}/readyz`)).status).toBe(200);
    } finally {
      await ok.close();
    }
  });

  it('answers 503 while the store refuses appends after a logical restore, stores nothing, and says why in the log', async () => {
    const restored = await createTestDatabase();
    try {
      await storeEventAheadOfCounter(restored);
      const { app, url, lines } = await start({ store: createPostgresEventStore(restored.sql) });
      try {
        const r = await post(`${url}/webhooks/${POS_ID}`, formOf(purchaseWebhook()));
        expect(r.status).toBe(503);
        expect(JSON.parse(r.body)).toEqual({
          error: 'unavailable',
          reason: expect.stringContaining('recon store advance-xid'),
        });
        expect(lines.some((l) => l.includes('webhook not stored') && l.includes('recon store advance-xid'))).toBe(true);
      } finally {
        await app.close();
      }
      const [n] = await restored.sql<
        { n: number }[]
      >`select count(*)::int as n from es_events where type = ${WebhookReceived.type}`;
      expect(n!.n).toBe(0);
    } finally {
      await restored.drop();
    }
  });

  it('applies the sender allow-list, honouring X-Forwarded-For only behind a trusted proxy', async () => {
    const body = purchaseWebhook();
    const plain = await start({ options: { ...options, allowedIps: ['203.0.113.10'] } });
    try {
      expect(
        (await post(`${plain.url}/webhooks/${POS_ID}`, formOf(body), { 'x-forwarded-for': '203.0.113.10' })).status,
      ).toBe(403);
    } finally {
      await plain.app.close();
    }
    const proxied = await start({ options: { ...options, allowedIps: ['203.0.113.10'], trustProxy: true } });
    try {
      expect(
        (
          await post(`${proxied.url}/webhooks/${POS_ID}`, formOf(body), {
            'x-forwarded-for': '198.51.100.7, 203.0.113.10',
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await post(`${proxied.url}/webhooks/${POS_ID}`, formOf(body), {
            'x-forwarded-for': '203.0.113.10, 198.51.100.7',
          })
        ).status,
      ).toBe(403);
      const [e] = await fx.store.readStream(paymentStream(POS_ID, body.payment_id as string));
      expect(e!.metadata).toMatchObject({ remoteAddress: '203.0.113.10' });
    } finally {
      await proxied.app.close();
    }
    // with a list of trusted proxies, the header counts only from them: a client reaching the port directly
    // cannot name an allowed sender (the test client connects from 127.0.0.1)
    const listed = await start({
      options: { ...options, allowedIps: ['203.0.113.10'], trustProxy: true, trustedProxies: ['10.0.0.5'] },
    });
    try {
      expect(
        (
          await post(`${listed.url}/webhooks/${POS_ID}`, formOf(purchaseWebhook()), {
            'x-forwarded-for': '203.0.113.10',
          })
        ).status,
      ).toBe(403);
    } finally {
      await listed.app.close();
    }
    const fromProxy = await start({
      options: {
        ...options,
        allowedIps: ['203.0.113.10'],
        trustProxy: true,
        trustedProxies: ['0:0:0:0:0:0:0:1', '127.0.0.1'],
      },
    });
    try {
      expect(
        (
          await post(`${fromProxy.url}/webhooks/${POS_ID}`, formOf(purchaseWebhook()), {
            'x-forwarded-for': '203.0.113.10',
          })
        ).status,
      ).toBe(200);
    } finally {
      await fromProxy.app.close();
    }
  });

  it('limits rejected requests per sender without ever limiting valid deliveries', async () => {
    const { app, url, receiver } = await start({ limiter: createRejectionLimiter({ burst: 3, perSecond: 0.001 }) });
    try {
      const data = encodeBase64Url(JSON.stringify(purchaseWebhook()));
      const forged = new URLSearchParams({ data, signature: sign('forged', data) }).toString();
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await post(`${url}/webhooks/${POS_ID}`, forged)).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
      const valid = purchaseWebhook();
      expect((await post(`${url}/webhooks/${POS_ID}`, formOf(valid))).status).toBe(200);
      expect(await fx.store.readStream(paymentStream(POS_ID, valid.payment_id as string))).toHaveLength(1);
      expect(receiver.metrics()).toMatchObject({ unauthorized: 3, rateLimited: 5 });
    } finally {
      await app.close();
    }
  });

  it('finishes the requests in flight on shutdown', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slowStore: EventStore = {
      ...fx.store,
      appendMany: async (reqs) => {
        await gate;
        return fx.store.appendMany(reqs);
      },
    };
    const { app, url } = await start({ store: slowStore });
    const body = purchaseWebhook();
    const pending = post(`${url}/webhooks/${POS_ID}`, formOf(body));
    while (app.inFlight() === 0) await new Promise((r) => setTimeout(r, 5));
    const closing = app.close({ graceMs: 10_000 });
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    release();
    expect((await pending).status).toBe(200);
    await closing;
    expect(await fx.store.readStream(paymentStream(POS_ID, body.payment_id as string))).toHaveLength(1);
  });
});

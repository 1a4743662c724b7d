import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../src/http/http-app';
import { createOrdersApi } from '../../src/http/orders-api';
import { createWebhookReceiver } from '../../src/http/receiver';
import { useTestStore } from '../support/db';
import { POS_ID, capturingLogger, formOf, post, project, purchaseWebhook } from '../ingest/helpers';

/**
 * A refusal at an HTTP door names the field and quotes the value it refused (`unknown method "…"`, `"…" is not a
 * sub-merchant id`). The stored rejection and the log masked a card number in that value, but the answer sent
 * back over the wire quoted it whole: a card number that reached recon by mistake left it again, to every proxy
 * and client log on the way. Now a refusal's answer is masked as the log and the store mask it.
 */

const fx = useTestStore();
const PAN = '4111111111111111';
const digitsOf = (text: string) => text.replace(/[ -]/g, '');

describe('a refused webhook quoting a card number', () => {
  it.each([
    ['method', { method: PAN }],
    ['status', { status: '4111 1111 1111 1111' }],
    ['amount', { amount: '4111-1111-1111-1111' }],
  ])('%s: the 400 answer names the field, masks the number', async (field, over) => {
    const { log } = capturingLogger();
    const receiver = createWebhookReceiver({
      store: fx.store,
      projects: [project],
      log,
      options: { allowedIps: [], trustProxy: false, maxBodyBytes: 65_536 },
    });
    const app = createHttpApp({ routes: [receiver.handle], log });
    const { url } = await app.listen(0);
    try {
      const r = await post(`${url}/webhooks/${POS_ID}`, formOf(purchaseWebhook(over)));
      expect(r.status).toBe(400);
      const error = (JSON.parse(r.body) as { error: string }).error;
      expect(error.startsWith(`${field}: `)).toBe(true);
      expect(digitsOf(error)).not.toContain(PAN);
      expect(error).toContain('411111******1111');
    } finally {
      await receiver.drain();
      await app.close();
    }
  });
});

describe('a refused order (POST /api/orders) quoting a card number', () => {
  const order = { order_id: 'o-pan', amount: '10.00', currency: 'EUR', created_at: '2025-01-05T10:00:00Z' };
  it.each([
    ['created_at', { created_at: PAN }],
    ['split[0].sub_merchant_id', { split: [{ sub_merchant_id: '4111 1111 1111 1111', amount: '1.00' }] }],
    ['amount', { amount: PAN }],
  ])('%s: the 400 answer names the field, masks the number', async (field, over) => {
    const { log } = capturingLogger();
    const api = createOrdersApi({ store: fx.store, token: 'orders-token-123456' });
    const app = createHttpApp({
      routes: [
        (req, res) => {
          void api(req, res);
          return true;
        },
      ],
      log,
    });
    const { url } = await app.listen(0);
    try {
      const res = await fetch(`${url}/api/orders`, {
        method: 'POST',
        body: JSON.stringify({ ...order, ...over }),
        headers: { 'content-type': 'application/json', authorization: 'Bearer orders-token-123456' },
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { field: string; message: string };
      expect(body.field).toBe(field);
      expect(digitsOf(body.message)).not.toContain(PAN);
      expect(body.message).toContain('411111******1111');
      // nothing of the refused order was written
      expect(await fx.store.readStream('order-o-pan')).toHaveLength(0);
    } finally {
      await app.close();
    }
  });
});

import { randomUUID } from 'node:crypto';
import { createLogger, type Logger } from '../../src/log';
import { encodeBase64Url, sign } from '../../src/psp/signature';

export const POS_ID = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
export const SECRET = 'sk_test_webhook_secret_456';

export const project = {
  name: 'test',
  posId: POS_ID,
  baseUrl: 'http://127.0.0.1:1',
  reportUrl: 'http://127.0.0.1:1',
  apiKey: 'pk_test_123',
  apiSecret: SECRET,
  endpointsKey: 'ek_test_789',
};

/** A primary-operation webhook body (6.2) as the PSP sends it. */
export function purchaseWebhook(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    payment_id: randomUUID(),
    order_id: `order-${randomUUID().slice(0, 8)}`,
    transaction_id: randomUUID(),
    pos_id: POS_ID,
    mode: 'direct',
    method: 'purchase',
    amount: 100.5,
    currency: 'UAH',
    status: 'success',
    status_code: '1000',
    status_description: 'transaction is successful',
    fee: { amount: 2.5, currency: 'UAH' },
    created_at: '2025-03-01T10:00:00.000',
    processed_at: '2025-03-01T10:00:02.000',
    ...over,
  };
}

export function formOf(payload: unknown, secret = SECRET): string {
  const data = encodeBase64Url(typeof payload === 'string' ? payload : JSON.stringify(payload));
  return new URLSearchParams({ data, signature: sign(secret, data) }).toString();
}

export async function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const res = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
  return { status: res.status, body: await res.text() };
}

/** A logger that keeps its lines (to check what reaches the logs). */
export function capturingLogger(secrets: string[] = [SECRET]): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger({ level: 'debug', secrets, write: (l) => lines.push(l) }), lines };
}

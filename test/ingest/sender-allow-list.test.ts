import { type IncomingMessage, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env';
import { canonicalIp } from '../../src/config/ip-address';
import { createHttpApp, type HttpApp } from '../../src/http/http-app';
import { createWebhookReceiver, type ReceiverOptions, senderOf } from '../../src/http/receiver';
import { silentLogger } from '../../src/log';
import { useTestStore } from '../support/db';
import { formOf, POS_ID, purchaseWebhook, SECRET } from './helpers';

/**
 * WEBHOOK_ALLOWED_IPS may spell an address in any of its forms (`0:0:0:0:0:0:0:1`, `2001:DB8::10`,
 * `::ffff:203.0.113.10`); the sender as Node reports it, or as a trusted proxy writes it in X-Forwarded-For,
 * has its own spelling. Both are compared in one canonical form (src/config/ip-address.ts): compared as
 * text, an allowed sender listed in another spelling would get 403 on every delivery.
 */

const fx = useTestStore();
const apps: HttpApp[] = [];

function configuredWebhookOptions(allowedIps: string): ReceiverOptions {
  const cfg = loadConfig({
    PSP_BASE_URL: 'https://psp.example',
    PSP_REPORT_URL: 'https://report.example',
    PSP_POS_ID: POS_ID,
    PSP_API_KEY: 'pk_x',
    PSP_API_SECRET: SECRET,
    PSP_ENDPOINTS_KEY: 'ek_x',
    DATABASE_URL: 'postgres://u@localhost/db',
    WEBHOOK_ALLOWED_IPS: allowedIps,
  } as NodeJS.ProcessEnv);
  if (!cfg.ok) throw new Error(`config refused: ${JSON.stringify(cfg.issues)}`);
  return cfg.config.webhook;
}

/** A receiver listening on the IPv6 loopback, so the socket's peer is `::1`. */
async function receiverOn6(options: ReceiverOptions): Promise<number> {
  const receiver = createWebhookReceiver({
    store: fx.store,
    projects: [{ name: 'a', posId: POS_ID, apiSecret: SECRET }],
    log: silentLogger,
    options,
  });
  const app = createHttpApp({ routes: [receiver.handle], log: silentLogger });
  apps.push(app);
  return (await app.listen(0, '::1')).port;
}

afterAll(async () => {
  for (const app of apps) await app.close({ graceMs: 1000 });
});

function postFromLoopback6(port: number, body: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '::1',
        port,
        path: `/webhooks/${POS_ID}`,
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          connection: 'close',
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('canonicalIp', () => {
  it('gives one spelling per address: lower case, compressed IPv6, IPv4-mapped IPv6 as IPv4', () => {
    expect(canonicalIp('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(canonicalIp('2001:DB8::10')).toBe('2001:db8::10');
    expect(canonicalIp('2001:0db8:0000:0000:0000:0000:0000:0010')).toBe('2001:db8::10');
    expect(canonicalIp('::ffff:203.0.113.10')).toBe('203.0.113.10');
    expect(canonicalIp('::FFFF:203.0.113.10')).toBe('203.0.113.10');
    expect(canonicalIp('::ffff:cb00:710a')).toBe('203.0.113.10');
    expect(canonicalIp(' 203.0.113.10 ')).toBe('203.0.113.10');
    expect(canonicalIp('::ffff:0:203.0.113.10')).not.toBe('203.0.113.10'); // IPv4-translated, not mapped
  });

  it('refuses what is not an address', () => {
    for (const t of ['not-an-ip', '', '203.0.113.010', '[::1]', '203.0.113.10:443', 'fe80::1%eth0'])
      expect(canonicalIp(t), t).toBeUndefined();
  });
});

describe('webhook sender allow-list', () => {
  let port: number;
  // The sender (here the IPv6 loopback) written in its full form, as an operator may paste it.
  const LISTED = '0:0:0:0:0:0:0:1';

  beforeAll(async () => {
    const options = configuredWebhookOptions(LISTED);
    expect(options.allowedIps).toEqual([LISTED]); // accepted, and kept as written
    port = await receiverOn6(options);
  });

  it('accepts a signed delivery from an allowed sender whatever spelling of its IPv6 address the list uses', async () => {
    expect(await postFromLoopback6(port, formOf(purchaseWebhook()))).toBe(200);
  });

  it('compares the X-Forwarded-For address of a trusted proxy in the same canonical form', async () => {
    const proxied = await receiverOn6({
      ...configuredWebhookOptions('2001:DB8::10,::ffff:203.0.113.10'),
      trustProxy: true,
    });
    const body = formOf(purchaseWebhook());
    expect(await postFromLoopback6(proxied, body, { 'x-forwarded-for': '198.51.100.7, 2001:db8:0:0:0:0:0:10' })).toBe(
      200,
    );
    expect(await postFromLoopback6(proxied, body, { 'x-forwarded-for': '203.0.113.10' })).toBe(200);
    expect(await postFromLoopback6(proxied, body, { 'x-forwarded-for': '::FFFF:CB00:710A' })).toBe(200);
    expect(await postFromLoopback6(proxied, body, { 'x-forwarded-for': '2001:db8::11' })).toBe(403);
    expect(await postFromLoopback6(proxied, body, { 'x-forwarded-for': '2001:db8::10, 198.51.100.7' })).toBe(403);
  });
});

describe('senderOf on a kept-open connection (issue 26: the peer worked out once per connection)', () => {
  const req = (socket: { remoteAddress?: string }, xff?: string) =>
    ({ socket, headers: xff ? { 'x-forwarded-for': xff } : {} }) as unknown as IncomingMessage;

  it('gives every request of a connection its peer, and each connection its own', () => {
    const a = { remoteAddress: '::FFFF:203.0.113.10' };
    const b = { remoteAddress: '2001:DB8:0:0:0:0:0:1' };
    for (let i = 0; i < 3; i++) {
      expect(senderOf(req(a), false)).toBe('203.0.113.10');
      expect(senderOf(req(b), false)).toBe('2001:db8::1');
    }
    // A trusted proxy's header is read per request, never remembered with the connection.
    expect(senderOf(req(a, '198.51.100.7'), true)).toBe('198.51.100.7');
    expect(senderOf(req(a, '198.51.100.8'), true)).toBe('198.51.100.8');
    expect(senderOf(req(a), true)).toBe('203.0.113.10');
  });

  it('does not keep an unknown peer (a socket already closed)', () => {
    const s: { remoteAddress?: string } = {};
    expect(senderOf(req(s), false)).toBe('unknown');
    s.remoteAddress = '127.0.0.1';
    expect(senderOf(req(s), false)).toBe('127.0.0.1');
  });
});

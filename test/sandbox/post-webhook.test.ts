import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../src/sandbox/webhooks';

// The stand-in PSP's sender (issue 26: node:http with a keep-alive agent instead of fetch).

let server: http.Server;
let base: string;
let connections = 0;
const bodies: string[] = [];
const seenOn = new WeakSet<object>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(`${req.headers['content-type']} ${Buffer.concat(chunks).toString()}`);
      if (req.url === '/silent') return; // never answers
      // a kept-alive connection closed by the server as the next request arrives on it: never read, never answered
      if (req.url === '/drops-reused' && seenOn.has(req.socket)) {
        req.socket.destroy();
        return;
      }
      seenOn.add(req.socket);
      const status = req.url === '/refuse' ? 500 : 200;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status }));
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('postWebhook', () => {
  it('posts the form, and the POSTs that follow reuse the connection', async () => {
    const before = connections;
    for (let i = 0; i < 5; i++)
      expect(await postWebhook(`${base}/webhooks/p`, `data=a${i}&signature=s`, 5_000)).toEqual({
        ok: true,
        status: 200,
      });
    expect(await postWebhook(new URL(`${base}/webhooks/p`), 'data=b&signature=s', 5_000)).toEqual({
      ok: true,
      status: 200,
    });
    expect(connections - before).toBe(1);
    expect(bodies.slice(-2)).toEqual([
      'application/x-www-form-urlencoded data=a4&signature=s',
      'application/x-www-form-urlencoded data=b&signature=s',
    ]);
  });

  it('a kept-alive connection the server dropped is not a lost webhook: sent once more on a new connection', async () => {
    const before = { connections, bodies: bodies.length };
    expect(await postWebhook(`${base}/drops-reused`, 'data=c1', 5_000)).toEqual({ ok: true, status: 200 });
    expect(await postWebhook(`${base}/drops-reused`, 'data=c2', 5_000)).toEqual({ ok: true, status: 200 });
    // c2 reached the server twice: on the connection c1 was answered on (dropped unanswered), then on a new one
    // (answered); c1 too went twice if it went on a connection kept from the test before
    const got = bodies.slice(before.bodies).map((b) => b.split(' ')[1]);
    expect(got.filter((b, i) => b !== got[i - 1])).toEqual(['data=c1', 'data=c2']);
    expect(got.filter((b) => b === 'data=c2')).toHaveLength(2);
    expect(connections - before.connections).toBe(got.length - 2); // one new connection per drop
  });

  it('an answer other than 2xx, no answer in time, and no server are failures', async () => {
    expect(await postWebhook(`${base}/refuse`, 'data=x', 5_000)).toEqual({ ok: false, status: 500, error: 'HTTP 500' });
    expect(await postWebhook(`${base}/silent`, 'data=x', 100)).toEqual({
      ok: false,
      status: null,
      error: 'no answer within 100 ms',
    });
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = await postWebhook(`http://127.0.0.1:${port}/`, 'data=x', 5_000);
    expect(refused).toMatchObject({ ok: false, status: null });
    expect(refused.ok === false && refused.error).toContain('ECONNREFUSED');
    expect(await postWebhook('not a url', 'data=x', 5_000)).toMatchObject({ ok: false, status: null });
  });
});

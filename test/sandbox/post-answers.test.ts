import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../src/sandbox/webhooks';

// The stand-in PSP reads answers itself (src/sandbox/http-post.ts, issue 26): each way HTTP/1.1 may frame an
// answer is read to its end, and the connection is kept only when the next answer can be told apart.
const ANSWERS: Record<string, string> = {
  '/length': 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello',
  '/chunked': 'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n',
  '/no-content': 'HTTP/1.1 204 No Content\r\n\r\n',
  '/continue': 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n',
  '/close': 'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok',
  '/refused': 'HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n',
  '/garbage': 'HELLO\r\n\r\n',
};

let server: net.Server;
let base: string;
let connections = 0;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      for (;;) {
        const end = text.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
        if (text.length < end + 4 + length) return;
        const path = text.slice(5, text.indexOf(' ', 5));
        text = text.slice(end + 4 + length);
        if (path === '/until-close') {
          // an answer without a length: its body runs to the close, sent in two parts
          socket.write('HTTP/1.1 200 OK\r\n\r\npart one, ');
          setTimeout(() => socket.end('part two'), 20);
        } else socket.write(ANSWERS[path] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

describe('the stand-in PSP reading answers', () => {
  it('reads answers framed by length, by chunks, without a body and after an interim answer, on one connection', async () => {
    const before = connections;
    expect(await postWebhook(`${base}/length`, 'data=a', 2_000)).toEqual({ ok: true, status: 200 });
    expect(await postWebhook(`${base}/chunked`, 'data=b', 2_000)).toEqual({ ok: true, status: 201 });
    expect(await postWebhook(`${base}/no-content`, 'data=c', 2_000)).toEqual({ ok: true, status: 204 });
    expect(await postWebhook(`${base}/continue`, 'data=d', 2_000)).toEqual({ ok: true, status: 202 });
    expect(await postWebhook(`${base}/refused`, 'data=e', 2_000)).toEqual({
      ok: false,
      status: 503,
      error: 'HTTP 503',
    });
    expect(connections - before).toBe(1);
  });

  it('reads a body to the close, and takes a new connection after an answer that closes', async () => {
    const before = connections;
    expect(await postWebhook(`${base}/until-close`, 'data=f', 2_000)).toEqual({ ok: true, status: 200 });
    expect(await postWebhook(`${base}/close`, 'data=g', 2_000)).toEqual({ ok: true, status: 200 });
    expect(await postWebhook(`${base}/length`, 'data=h', 2_000)).toEqual({ ok: true, status: 200 });
    // the first went on the connection kept from before, which its answer closed; the second's was closed too
    expect(connections - before).toBe(2);
  });

  it('an answer that is not HTTP is a failure, and the next POST is answered on a new connection', async () => {
    expect(await postWebhook(`${base}/garbage`, 'data=i', 2_000)).toEqual({
      ok: false,
      status: null,
      error: 'malformed answer',
    });
    expect(await postWebhook(`${base}/length`, 'data=j', 2_000)).toEqual({ ok: true, status: 200 });
  });
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly data: string;
  readonly signature: string;
  /** the decoded JSON */
  readonly body: Record<string, unknown>;
}

/** A plain webhook receiver on 127.0.0.1 that records what arrives and answers `status`. */
export async function startReceiver(status = 200) {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const data = form.get('data') ?? '';
      received.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'],
        data,
        signature: form.get('signature') ?? '',
        body: JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as Record<string, unknown>,
      });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

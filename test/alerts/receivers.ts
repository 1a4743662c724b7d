import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/**
 * Receivers on loopback for the alert tests. The webhook receiver checks the signature as docs/exceptions.md
 * ("What is sent") tells a receiver to, written from that text and not from src/alerts: the timestamp header
 * within 5 minutes of its own clock, HMAC-SHA256 keyed by the secret's UTF-8 bytes over
 * `timestamp + "." + raw body`, lower-case hex after `v1=`, compared in constant time, the body parsed only then.
 */

export interface WebhookDelivery {
  readonly alertId: string;
  readonly body: Record<string, unknown>;
  readonly verified: boolean;
  readonly refusedBecause: string | null;
}

export interface Receiver {
  readonly url: string;
  close(): Promise<void>;
}

async function listen(server: Server, path: string): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
}

const closer = (server: Server) => () => new Promise<void>((resolve) => server.close(() => resolve()));

/** Verifies one request by the documented steps; null when it passes, else why it is refused. */
export function verifyDocumented(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  raw: Buffer,
  clockSeconds: number,
): string | null {
  const timestamp = headers['x-recon-timestamp'];
  const given = headers['x-recon-signature'];
  if (typeof timestamp !== 'string' || !/^\d+$/.test(timestamp)) return 'no timestamp';
  if (Math.abs(clockSeconds - Number(timestamp)) > 300) return 'timestamp too far from the clock';
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(Buffer.from(`${timestamp}.`, 'utf8'));
  mac.update(raw);
  const expected = Buffer.from(`v1=${mac.digest('hex')}`, 'utf8');
  const got = Buffer.from(typeof given === 'string' ? given : '', 'utf8');
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) return 'signature differs';
  return null;
}

/**
 * The signed webhook's receiver. `failNext` answers that many requests with 500 first; `clock` is its own
 * clock in Unix seconds (the tests' fake one).
 */
export async function webhookReceiver(opts: {
  secret: string;
  clock: () => number;
}): Promise<Receiver & { received: WebhookDelivery[]; failNext: number }> {
  const state = {
    received: [] as WebhookDelivery[],
    failNext: 0,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const refusedBecause = verifyDocumented(opts.secret, req.headers, raw, opts.clock());
      if (state.failNext > 0) {
        state.failNext--;
        res.writeHead(500).end('down');
        return;
      }
      const body = refusedBecause ? {} : (JSON.parse(raw.toString('utf8')) as Record<string, unknown>);
      state.received.push({
        alertId: String(req.headers['x-recon-alert-id']),
        body,
        verified: refusedBecause === null,
        refusedBecause,
      });
      res.writeHead(refusedBecause ? 401 : 204).end();
    });
  });
  const url = await listen(server, '/hook');
  return Object.assign(state, { url, close: closer(server) });
}

/** A Slack-compatible incoming webhook: takes `{"text": …}` and answers `ok`. */
export async function slackReceiver(): Promise<Receiver & { texts: string[] }> {
  const texts: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text?: unknown };
      if (typeof body.text !== 'string' || Object.keys(body).length !== 1) {
        res.writeHead(400).end('invalid_payload');
        return;
      }
      texts.push(body.text);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  const url = await listen(server, '/services/T000/B000/XXXXXXXX');
  return { texts, url, close: closer(server) };
}

/** A real SMTP server on loopback that takes recon / s3cret-pass and keeps every message, parsed. */
export async function smtpReceiver(): Promise<{ url: string; mails: ParsedMail[]; close(): Promise<void> }> {
  const mails: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: false,
    disabledCommands: ['STARTTLS'],
    onAuth(auth, _session, cb) {
      if (auth.username === 'recon' && auth.password === 's3cret-pass') cb(null, { user: 'recon' });
      else cb(new Error('invalid credentials'));
    },
    onData(stream, _session, cb) {
      simpleParser(stream)
        .then((m) => {
          mails.push(m);
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://recon:s3cret-pass@127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

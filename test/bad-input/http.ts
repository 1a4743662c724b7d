import { request } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { createHttpApp, type HttpApp } from '../../src/http/http-app';
import { createRejectionLimiter } from '../../src/http/rate-limit';
import { createWebhookReceiver, type WebhookReceiver } from '../../src/http/receiver';
import { silentLogger } from '../../src/log';
import type { Sql } from '../../src/db/connect';
import type { EventStore } from '../../src/store/types';
import { useTestStore, type TestStore } from '../support/db';
import { MAX_BODY, POS_A, POS_B, SECRET_A, SECRET_B, type WebhookRequest } from './webhooks.cases';

/** The real receiver on a loopback port, for projects A and B, with the corpus' body limit. */
export async function startReceiver(
  store: EventStore,
): Promise<{ app: HttpApp; receiver: WebhookReceiver; port: number }> {
  const project = (name: string, posId: string, apiSecret: string) => ({ name, posId, apiSecret });
  const receiver = createWebhookReceiver({
    store,
    projects: [project('a', POS_A, SECRET_A), project('b', POS_B, SECRET_B)],
    log: silentLogger,
    options: { allowedIps: [], trustProxy: false, maxBodyBytes: MAX_BODY },
    // Every case comes from 127.0.0.1: a budget this large keeps the rejection limiter (tested by
    // test/ingest) out of the corpus' way, so that each case shows its own status.
    limiter: createRejectionLimiter({ burst: 1e9, perSecond: 1e9 }),
  });
  const app = createHttpApp({ routes: [receiver.handle], log: silentLogger });
  const { port } = await app.listen(0, '127.0.0.1');
  return { app, receiver, port };
}

export interface TestReceiver extends TestStore {
  readonly receiver: WebhookReceiver;
  readonly port: number;
}

/**
 * startReceiver on a database and store of its own (useTestStore) for the enclosing file or describe block:
 * listening before its tests; closed, then the database dropped, after them. Read it in hooks and tests.
 */
export function useReceiver(): TestReceiver {
  const fx = useTestStore();
  let started: { app: HttpApp; receiver: WebhookReceiver; port: number } | undefined;
  beforeAll(async () => {
    started = await startReceiver(fx.store);
  });
  afterAll(async () => {
    await started?.app.close({ graceMs: 2000 });
  });
  const ready = () => {
    if (!started) throw new Error('useReceiver: the receiver starts in beforeAll; read it in hooks and tests');
    return started;
  };
  return {
    get db() {
      return fx.db;
    },
    get store() {
      return fx.store;
    },
    get receiver() {
      return ready().receiver;
    },
    get port() {
      return ready().port;
    },
  };
}

export interface Answer {
  readonly status: number;
  readonly error: string;
}

/** Sends one request exactly as built (method, headers, bytes, chunked or not); a fresh connection each time. */
export function send(port: number, r: WebhookRequest): Promise<Answer> {
  const body = typeof r.body === 'string' ? Buffer.from(r.body, 'utf8') : Buffer.from(r.body);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...r.headers, connection: 'close' };
    if (!r.chunked) headers['content-length'] = body.length;
    const req = request(
      { host: '127.0.0.1', port, path: r.path, method: r.method ?? 'POST', headers, agent: false },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let error = '';
          try {
            const j = JSON.parse(text) as { error?: unknown };
            error = typeof j.error === 'string' ? j.error : '';
          } catch {
            error = text;
          }
          resolve({ status: res.statusCode ?? 0, error });
        });
        res.on('error', reject);
      },
    );
    // The server may answer (413, 431) and close before the whole body is written: the answer counts.
    req.on('error', (e) => setTimeout(() => reject(e), 50));
    if (r.chunked) {
      for (let i = 0; i < body.length; i += 16_384) req.write(body.subarray(i, i + 16_384));
      req.end();
    } else req.end(body);
  });
}

/**
 * What was appended, read straight from the table. Not through `readAll`: that one only shows events below
 * the server-wide snapshot xmin (so that followers never skip one), and a test running in another database
 * of the same server can hold that back for a while.
 */
export interface StoredEvent {
  readonly stream: string;
  readonly type: string;
  readonly data: Record<string, unknown>;
}

export async function storeMark(sql: Sql): Promise<bigint> {
  const [r] = await sql<{ m: string }[]>`select coalesce(max(global_position), 0)::text as m from es_events`;
  return BigInt(r!.m);
}

export async function eventsSince(sql: Sql, mark: bigint): Promise<StoredEvent[]> {
  const rows = await sql<{ stream_id: string; type: string; data: Record<string, unknown> }[]>`
    select stream_id, type, data from es_events where global_position > ${mark.toString()}::bigint order by global_position`;
  return rows.map((r) => ({ stream: r.stream_id, type: r.type, data: r.data }));
}

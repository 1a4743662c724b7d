import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { healMissingWebhooks } from '../../src/ingest/heal';
import { silentLogger } from '../../src/log';
import { createPspClient } from '../../src/psp/client';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { registerRecords } from './operations-seen-support';

/**
 * A webhook re-send the PSP accepts (2xx) with an answer that is not a payment record (the PSP's material shows
 * `{"result":"ok"}`-like bodies and empty ones) is a request made: recorded once and never asked again. Before,
 * the answer failed the record schema, the request counted as failed and every heal run asked again.
 */

const POS = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
let db: TestDatabase;
let server: Server;
let base: string;
const hits: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  server = createServer((req, res) => {
    hits.push(req.url!);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(req.url!.includes('/o-empty/') ? '' : '{"result":"ok"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // final in the register (orders o-empty and o-ok), no webhook: heal finds them through the healing index
  const store = createPostgresEventStore(db.sql);
  for (const payment of ['empty', 'ok']) await registerRecords(POS).appendRecord(db, store, payment);
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await db.drop();
});

describe('a re-send accepted with an answer that is not a record', () => {
  it('counts as sent: recorded once, not asked again', async () => {
    const project: PspProject = {
      name: 'test',
      posId: POS,
      baseUrl: base,
      reportUrl: `${base}/report`,
      apiKey: 'pk',
      apiSecret: 'sk',
      endpointsKey: 'ek',
    };
    const deps = {
      sql: db.sql,
      store: createPostgresEventStore(db.sql),
      projects: [project],
      log: silentLogger,
      graceHours: 48,
      timezone: 'UTC',
      clientFor: (p: PspProject) => createPspClient(p, { timeoutMs: 5_000, maxRetries: 0 }),
    };
    const first = await healMissingWebhooks(deps, { now: new Date('2025-02-01T00:00:00Z') });
    expect(first).toMatchObject({ candidates: 2, requested: 2, failed: 0 });
    expect(hits).toHaveLength(2);
    const [recorded] = await db.sql<{ n: number; outcomes: string[] }[]>`
      select count(*)::int as n, array_agg(distinct data->>'outcome') as outcomes
      from es_events where type = 'WebhookResendRequested'`;
    expect(recorded).toEqual({ n: 2, outcomes: ['requested'] });

    const second = await healMissingWebhooks(deps, { now: new Date('2025-02-02T00:00:00Z') });
    expect(second).toMatchObject({ candidates: 0, requested: 0, failed: 0 });
    expect(hits).toHaveLength(2);
  });
});

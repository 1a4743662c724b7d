import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { createHttpApp, type HttpApp } from '../../src/http/http-app';
import { createWebhookReceiver, type WebhookReceiver } from '../../src/http/receiver';
import { healMissingWebhooks, type HealDeps } from '../../src/ingest/heal';
import { syncRange } from '../../src/ingest/sync';
import { silentLogger } from '../../src/log';
import { createPspClient } from '../../src/psp/client';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * Found in review (issue 25, `recon demo --seed auditor-7` failed its check with an unexpected missing_webhook):
 * the lost webhook of a subscription's initial purchase was asked for without its transaction id, so the PSP
 * re-sent the subscription's latest charge (interface 4.9) and the purchase's webhook never came.
 */

let db: TestDatabase;
let store: EventStore;
let sandbox: Sandbox;
let app: HttpApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  // the demo's scenario in which it was seen
  sandbox = await startSandbox({
    scenario: { seed: 'auditor-7', month: '2026-10', timezone: 'UTC', payments: 300 },
    faults: { reportNotReadyPolls: 0 },
  });
  receiver = createWebhookReceiver({
    store,
    projects: sandbox.projects,
    log: silentLogger,
    options: { allowedIps: [], trustProxy: false, maxBodyBytes: 65_536 },
  });
  app = createHttpApp({ routes: [receiver.handle], log: silentLogger });
  const { url } = await app.listen(0);
  await syncRange(
    { store, projects: sandbox.projects, log: silentLogger, timezone: 'UTC', reportMaxWaitMs: 5_000, pollBaseMs: 5 },
    { from: '2026-10-01', to: '2026-11-01' },
  );
  await sandbox.deliverWebhooks((posId: string) => `${url}/webhooks/${posId}`, { reorderWindow: 8 });
}, 300_000);
afterAll(async () => {
  await app.close();
  await sandbox.close();
  await db.drop();
});

const deps = (): HealDeps => ({
  sql: db.sql,
  store,
  projects: sandbox.projects,
  log: silentLogger,
  graceHours: 48,
  timezone: 'UTC',
  clientFor: (p: PspProject) => createPspClient(p, { timeoutMs: 5_000 }),
});

async function webhooksOf(paymentId: string, method: string): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    select count(*)::int as n from es_events where type = 'WebhookReceived' and stream_id like ${'payment-%-' + paymentId}
      and data->'webhook'->>'method' = ${method}`;
  return row!.n;
}

describe('healing the lost webhook of a subscription’s initial purchase', () => {
  it('asks for that transaction, and its webhook is stored', { timeout: 300_000 }, async () => {
    const ops = [...sandbox.scenario.operations()];
    const lost = ops.filter(
      (op) =>
        op.webhook === 'lost_resendable' &&
        op.method === 'purchase' &&
        ops.some((o) => o.orderId === op.orderId && o.method === 'recurrent'),
    );
    expect(lost.length).toBeGreaterThan(0);
    for (const op of lost) expect(await webhooksOf(op.paymentId, 'purchase')).toBe(0);

    const run = await healMissingWebhooks(deps(), { now: new Date('2027-01-01T00:00:00Z') });
    expect(run.failed).toBe(0);
    await sandbox.settled();
    await receiver.drain();
    for (const op of lost) expect(await webhooksOf(op.paymentId, 'purchase')).toBeGreaterThanOrEqual(1);
  });
});

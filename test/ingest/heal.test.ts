import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { healMissingWebhooks, type HealDeps } from '../../src/ingest/heal';
import { createHttpApp, type HttpApp } from '../../src/http/http-app';
import { createWebhookReceiver, type WebhookReceiver } from '../../src/http/receiver';
import { syncRange } from '../../src/ingest/sync';
import { silentLogger } from '../../src/log';
import { createPspClient } from '../../src/psp/client';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

let db: TestDatabase;
let store: EventStore;
let sandbox: Sandbox;
let app: HttpApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  sandbox = await startSandbox({
    scenario: {
      seed: 'ingest-heal',
      month: '2025-01',
      timezone: 'UTC',
      payments: 200,
      injections: { webhook_lost_resendable: 4, missing_webhook: 2 },
    },
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
  const target = (posId: string) => `${url}/webhooks/${posId}`;
  await syncRange(
    { store, projects: sandbox.projects, log: silentLogger, timezone: 'UTC', reportMaxWaitMs: 5_000, pollBaseMs: 5 },
    { from: '2025-01-01', to: '2025-02-23' },
  );
  // Delivered with duplicates and reordering; the scenario's lost webhooks are not sent.
  const stats = await sandbox.deliverWebhooks(target, { duplicateRate: 0.1, reorderWindow: 8 });
  expect(stats.failed).toBe(0);
  expect(stats.lostByScenario).toBeGreaterThanOrEqual(6);
});
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

describe('healing missing webhooks against the sandbox', () => {
  it('asks once for each final operation without a webhook, and the re-sent webhooks are stored', async () => {
    const lost = [...sandbox.scenario.operations()].filter(
      (op) => op.webhook === 'lost_resendable' && (op.status === 'success' || op.status === 'failure'),
    );
    expect(lost.length).toBeGreaterThan(0);
    for (const op of lost) expect(await webhooksOf(op.paymentId, op.method)).toBe(0);

    // Within the grace period nothing is asked yet.
    const early = await healMissingWebhooks(deps(), { now: new Date('2025-01-02T00:00:00Z') });
    expect(early.requested).toBe(0);

    // Two heal runs at once (the nightly and the hourly job in two workers) ask the PSP once per operation.
    const resendsBefore = sandbox.stats.webhooks.resendRequests;
    const runs = await Promise.all(
      [1, 2].map(() => healMissingWebhooks(deps(), { now: new Date('2025-04-01T00:00:00Z') })),
    );
    const first = {
      failed: runs[0]!.failed + runs[1]!.failed,
      requested: runs[0]!.requested + runs[1]!.requested,
      requests: [...runs[0]!.requests, ...runs[1]!.requests],
    };
    expect(first.failed).toBe(0);
    expect(new Set(first.requests.map((r) => `${r.paymentId}/${r.method}`)).size).toBe(first.requests.length);
    expect(sandbox.stats.webhooks.resendRequests - resendsBefore).toBe(first.requests.length);
    const asked = new Set(first.requests.map((r) => `${r.paymentId}/${r.method}`));
    for (const op of lost) expect(asked.has(`${op.paymentId}/${op.method}`)).toBe(true);
    // Lost for good: asked too (the PSP cannot re-send them; the discrepancy stays).
    const forGood = [...sandbox.scenario.operations()].filter(
      (op) => op.webhook === 'lost_for_good' && op.status !== 'init',
    );
    for (const op of forGood) expect(asked.has(`${op.paymentId}/${op.method}`)).toBe(true);

    await sandbox.settled();
    await receiver.drain();
    for (const op of lost) expect(await webhooksOf(op.paymentId, op.method)).toBeGreaterThanOrEqual(1);
    for (const op of forGood) expect(await webhooksOf(op.paymentId, op.method)).toBe(0);

    const recorded = await db.sql<
      { n: number }[]
    >`select count(*)::int as n from es_events where type = 'WebhookResendRequested'`;
    expect(recorded[0]!.n).toBe(first.requested);

    // Recorded: the next run asks nothing again.
    const second = await healMissingWebhooks(deps(), { now: new Date('2025-04-02T00:00:00Z') });
    expect(second.requested).toBe(0);
    expect(second.candidates).toBe(0);
    const after = await db.sql<
      { n: number }[]
    >`select count(*)::int as n from es_events where type = 'WebhookResendRequested'`;
    expect(after[0]!.n).toBe(first.requested);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PspProject } from '../../src/config/env';
import { createHttpApp, type HttpApp } from '../../src/http/http-app';
import { createWebhookReceiver, type WebhookReceiver } from '../../src/http/receiver';
import { healMissingWebhooks, type HealDeps } from '../../src/ingest/heal';
import { syncRange } from '../../src/ingest/sync';
import { silentLogger } from '../../src/log';
import { createPspClient } from '../../src/psp/client';
import { generateScenario, type Scenario } from '../../src/sandbox/scenario';
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
  // a month with such a purchase: the first seed from the one it was seen in (auditor-7) that draws one
  sandbox = await startSandbox({ scenario: scenarioWithLostInitialPurchase(), faults: { reportNotReadyPolls: 0 } });
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

/** Subscriptions' initial purchases whose webhook the scenario loses but the PSP re-sends when asked. */
const lostInitialPurchases = (scenario: Scenario) => {
  const ops = [...scenario.operations()];
  return ops.filter(
    (op) =>
      op.webhook === 'lost_resendable' &&
      op.method === 'purchase' &&
      ops.some((o) => o.orderId === op.orderId && o.method === 'recurrent'),
  );
};

function scenarioWithLostInitialPurchase(): Scenario {
  for (let k = 7; k < 107; k++) {
    const scenario = generateScenario({ seed: `auditor-${k}`, month: '2026-10', timezone: 'UTC', payments: 300 });
    if (lostInitialPurchases(scenario).length > 0) return scenario;
  }
  throw new Error('no seed from auditor-7 to auditor-106 draws a lost initial purchase');
}

describe('healing the lost webhook of a subscription’s initial purchase', () => {
  it('asks for that transaction, and its webhook is stored', { timeout: 300_000 }, async () => {
    const lost = lostInitialPurchases(sandbox.scenario);
    expect(lost.length).toBeGreaterThan(0);
    for (const op of lost) expect(await webhooksOf(op.paymentId, 'purchase')).toBe(0);

    const run = await healMissingWebhooks(deps(), { now: new Date('2027-01-01T00:00:00Z') });
    expect(run.failed).toBe(0);
    await sandbox.settled();
    await receiver.drain();
    for (const op of lost) expect(await webhooksOf(op.paymentId, 'purchase')).toBeGreaterThanOrEqual(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healMissingWebhooks, type HealDeps } from '../../src/ingest/heal';
import { syncRange } from '../../src/ingest/sync';
import { silentLogger } from '../../src/log';
import { createPspClient, type PspClient } from '../../src/psp/client';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

// Re-send requests go a few at a time (RECON_HEAL_CONCURRENCY): shown with a PSP client that holds each
// request until `width` are in flight together, and refuses one order's re-send.

let db: TestDatabase;
let store: EventStore;
let sandbox: Sandbox;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  sandbox = await startSandbox({
    scenario: { seed: 'heal-concurrency', month: '2025-01', timezone: 'UTC', payments: 24 },
    faults: { reportNotReadyPolls: 0 },
  });
  // Synced, no webhook delivered: every final operation is a candidate.
  await syncRange(
    { store, projects: sandbox.projects, log: silentLogger, timezone: 'UTC', reportMaxWaitMs: 5_000, pollBaseMs: 5 },
    { from: '2025-01-01', to: '2025-02-23' },
  );
});
afterAll(async () => {
  await sandbox.close();
  await db.drop();
});

interface Watch {
  inFlight: number;
  most: number;
  asked: string[];
}

/** The sandbox's client whose re-sends wait until `width` are in flight (or 2 s), and fail for `refused`. */
function gatedClient(real: PspClient, width: number, watch: Watch, refused: () => string | undefined): PspClient {
  let waiting: Array<() => void> = [];
  return {
    ...real,
    async resendWebhook(orderId, operation, opts) {
      watch.inFlight++;
      watch.most = Math.max(watch.most, watch.inFlight);
      watch.asked.push(orderId);
      try {
        if (watch.inFlight >= width) {
          for (const go of waiting) go();
          waiting = [];
        } else await new Promise<void>((go) => waiting.push(go) && setTimeout(go, 2_000));
        if (orderId === refused()) throw Object.assign(new Error('refused by the test'), { code: 'PSP_HTTP_500' });
        return await real.resendWebhook(orderId, operation, opts);
      } finally {
        watch.inFlight--;
      }
    },
  };
}

const depsWith = (client: (real: PspClient) => PspClient, concurrency: number): HealDeps => ({
  sql: db.sql,
  store,
  projects: sandbox.projects,
  log: silentLogger,
  graceHours: 48,
  timezone: 'UTC',
  resendConcurrency: concurrency,
  clientFor: (p) => client(createPspClient(p, { timeoutMs: 5_000 })),
});

async function resendEvents(): Promise<{ outcome: string; n: number }[]> {
  return db.sql<{ outcome: string; n: number }[]>`
    select data->>'outcome' as outcome, count(*)::int as n from es_events where type = 'WebhookResendRequested'
    group by 1 order by 1`;
}

describe('healing with re-send requests in flight together', () => {
  it('keeps 4 in flight, records a failure among them, and asks each operation once', async () => {
    const watch: Watch = { inFlight: 0, most: 0, asked: [] };
    let refused: string | undefined;
    const deps = depsWith(
      (real) =>
        gatedClient(real, 4, watch, () => {
          refused ??= watch.asked[1];
          return refused;
        }),
      4,
    );
    const first = await healMissingWebhooks(deps, { now: new Date('2025-04-01T00:00:00Z') });
    expect(first.candidates).toBeGreaterThan(8);
    expect(watch.most).toBe(4);
    expect(first.failed).toBe(1);
    const failed = first.requests.filter((r) => r.outcome === 'failed');
    expect(failed.map((r) => [r.orderId, r.detail])).toEqual([[refused, 'PSP_HTTP_500: refused by the test']]);
    expect(first.requested).toBe(first.candidates - 1);
    expect(await resendEvents()).toEqual([
      { outcome: 'failed', n: 1 },
      { outcome: 'requested', n: first.requested },
    ]);

    // The next run asks again only for the failed one; the requested are never asked twice.
    const again: Watch = { inFlight: 0, most: 0, asked: [] };
    const second = await healMissingWebhooks(
      depsWith((real) => gatedClient(real, 1, again, () => undefined), 4),
      { now: new Date('2025-04-02T00:00:00Z') },
    );
    expect(again.asked).toEqual([refused]);
    expect(second.requested).toBe(1);
    expect(await resendEvents()).toEqual([
      { outcome: 'failed', n: 1 },
      { outcome: 'requested', n: first.requested + 1 },
    ]);
  });
});

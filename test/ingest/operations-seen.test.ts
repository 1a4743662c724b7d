import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newEvent } from '../../src/events/catalog';
import { healStream, WebhookResendRequested } from '../../src/events/ingest-events';
import { registerObserved, webhookReceived } from '../../src/ingest/observations';
import { silentLogger } from '../../src/log';
import { ProjectionAheadOfStoreError, ProjectionCheckpointMismatchError } from '../../src/projector/errors';
import { rebuildProjection, runProjections, type RunnerDeps } from '../../src/projector/runner';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { registerRecords, seenPayments } from './operations-seen-support';

/**
 * The healing index (projections/operations-seen.ts) is a read model like the others: the runner's
 * batches, checkpoints, store check and rebuild apply to it.
 */

const ROOT = path.resolve(__dirname, '../..');
const POS = 'pos-ops-seen';
const NAME = 'operations_seen';
const { appendRecord } = registerRecords(POS);

describe('operations seen (the healing index)', () => {
  const fx = useTestStore();
  const deps = (): RunnerDeps => ({
    sql: fx.db.sql,
    store: fx.store,
    log: silentLogger,
    timezone: 'UTC',
    graceHours: 48,
  });
  const payments = () => seenPayments(fx.db.sql);
  const rows = () => fx.db.sql`select * from recon.operations_seen order by pos_id, payment_id, method`;
  const liveSchema = async () =>
    (
      await fx.db.sql<{ schema_name: string }[]>`
      select schema_name from projection_builds where name = ${NAME} and status = 'live'`
    )[0]!.schema_name;

  const resend = async (paymentId: string, outcome: 'requested' | 'failed') => {
    const e = newEvent(WebhookResendRequested, {
      posId: POS,
      orderId: `o-${paymentId}`,
      paymentId,
      operation: 'purchase',
      transactionId: null,
      requestedAt: '2025-02-03T00:00:00.000Z',
      outcome,
      detail: outcome === 'failed' ? 'timeout' : null,
    });
    await fx.store.append(healStream(POS), [e]);
    await waitVisible(fx.db.sql, fx.store);
  };

  it('says per operation whether it is final and whether a re-send was asked, the same whatever the batches', async () => {
    await appendRecord(fx.db, fx.store, 'p-1');
    await appendRecord(fx.db, fx.store, 'p-2');
    await resend('p-1', 'requested');
    await resend('p-2', 'failed');

    const live = await runProjections(deps(), { names: [NAME], batchSize: 1 });
    expect(live.projections.map((p) => [p.name, p.status])).toEqual([[NAME, 'live']]);
    const first = await rows();
    expect(
      first.map((r) => [r.payment_id, r.final_status, r.in_register, r.resend_requested_at?.toISOString() ?? null]),
    ).toEqual([
      ['p-1', 'success', true, '2025-02-03T00:00:00.000Z'],
      ['p-2', 'success', true, null],
    ]);

    const rebuilt = await rebuildProjection(deps(), NAME, { batchSize: 1000 });
    expect(rebuilt.projections[0]).toMatchObject({ name: NAME, wentLive: true });
    expect(await rows()).toEqual(first);
  });

  it("is refused when its checkpoint is past the store's head (the store restored or replaced), and rebuilt to the store", async () => {
    await runProjections(deps(), { names: [NAME] });
    const schema = await liveSchema();
    // as if the store had been restored to an older backup: the checkpoint is beyond everything it has,
    // and the index holds an operation the store no longer has
    await fx.db.sql`update projection_builds set checkpoint = '999999999999/999999999' where schema_name = ${schema}`;
    await fx.db
      .sql`insert into ${fx.db.sql(schema)}.operations (pos_id, payment_id, method) values (${POS}, 'p-gone', 'purchase')`;
    await appendRecord(fx.db, fx.store, 'p-3');

    await expect(runProjections(deps(), { names: [NAME] })).rejects.toBeInstanceOf(ProjectionAheadOfStoreError);
    await rebuildProjection(deps(), NAME);
    expect(await payments()).toEqual(['p-1', 'p-2', 'p-3']);
  });

  it('is refused when its checkpoint holds another event (the store restored and appended to since), and rebuilt', async () => {
    await runProjections(deps(), { names: [NAME] });
    const schema = await liveSchema();
    await fx.db
      .sql`update projection_builds set checkpoint_event_id = ${crypto.randomUUID()}::uuid where schema_name = ${schema}`;
    await fx.db
      .sql`insert into ${fx.db.sql(schema)}.operations (pos_id, payment_id, method) values (${POS}, 'p-gone', 'purchase')`;

    await expect(runProjections(deps(), { names: [NAME] })).rejects.toBeInstanceOf(ProjectionCheckpointMismatchError);
    await rebuildProjection(deps(), NAME);
    expect(await payments()).toEqual(['p-1', 'p-2', 'p-3']);
  });

  it('is rebuilt by recon project --rebuild operations_seen', async () => {
    const run = spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), 'project', '--rebuild', NAME], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_URL: fx.db.url,
        RECON_LOG_LEVEL: 'warn',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^${NAME} +v\\d+ +live \\(new build live\\)`, 'm'));
    expect(await payments()).toEqual(['p-1', 'p-2', 'p-3']);
  });
});

describe('operations seen: a subscription charge', () => {
  const fx = useTestStore();
  const { record } = registerRecords(POS);

  it("marks the purchase and its charge (method recurrent) recurring, with the webhook's time, in one batch", async () => {
    const registered = registerObserved(POS, '{}', record('p-sub'), {
      source: 'register',
      reportId: 'r-1',
      window: { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' },
      observedAt: '2025-02-02T00:00:00.000Z',
    });
    const webhook = webhookReceived(
      POS,
      '{}',
      {
        kind: 'recurring',
        paymentId: 'p-sub',
        orderId: 'o-p-sub',
        operationId: null,
        transactionId: 't-charge',
        method: 'purchase',
        status: 'success',
        statusCode: null,
        currency: 'UAH',
        amount: '1000',
        fee: null,
        feeCurrency: null,
        createdAt: null,
        processedAt: null,
        recurringId: 'r-1',
        other: {},
      },
      { receivedAt: '2025-01-10T10:00:05.000Z', remoteAddress: null },
    );
    await fx.store.appendMany([{ stream: registered.stream, events: [registered.event, webhook.event] }]);
    await waitVisible(fx.db.sql, fx.store);
    const deps: RunnerDeps = { sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: 'UTC', graceHours: 48 };
    await runProjections(deps, { names: [NAME] });
    const rows = await fx.db.sql<
      { method: string; recurring: boolean; final_status: string | null; webhook_at: Date }[]
    >`
      select method, recurring, final_status, webhook_at from recon.operations_seen where payment_id = 'p-sub' order by method`;
    expect(rows.map((r) => [r.method, r.recurring, r.final_status, r.webhook_at.toISOString()])).toEqual([
      ['purchase', true, 'success', '2025-01-10T10:00:05.000Z'],
      ['recurrent', true, null, '2025-01-10T10:00:05.000Z'],
    ]);
  });
});

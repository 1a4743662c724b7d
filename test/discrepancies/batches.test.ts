import { beforeAll, describe, expect, it } from 'vitest';
import { useTestStore, type TestDatabase } from '../support/db';
import { newEvent } from '../../src/events/catalog';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { discrepancyId } from '../../src/reconciliation/discrepancy-rules';
import { rebuildProjection } from '../../src/projector/runner';
import { liveSchema } from '../support/live-schema';
import type { EventStore } from '../../src/store/types';
import { appendChunks, scenarioFor } from '../../fixtures/scenario-events';
import {
  POS,
  appendAll,
  at,
  deps,
  discrepancies,
  periodRow,
  project,
  registerRows,
  syncCompleted,
  webhook,
  viewsDigest,
} from './fixtures';
import { reconciliationEvents } from '../../fixtures/reconciliation-events';

/**
 * The projection loads only the payments a batch touches and writes back only what changed; these tests
 * hold it to the same rows whatever the batch sizes, on a realistic stream (sandbox scenario with
 * receivers, periods, webhooks, sync windows, re-syncs and re-send requests, then a late directory import
 * of the unlisted sellers), and check that an acceptance that arrives before its discrepancy is applied once
 * the discrepancy appears.
 */

function digest(db: TestDatabase): Promise<string[]> {
  return viewsDigest(db.sql, ['discrepancies', 'operations', 'operation_receivers', 'sync_windows']);
}

/** Rebuilds in batches of `batchSize`, then catches up what a short read left (see `project`). */
async function rebuildIn(db: TestDatabase, store: EventStore, batchSize: number): Promise<string[]> {
  await rebuildProjection(deps(db.sql, store), 'reconciliation', { batchSize });
  await project(db.sql, store, batchSize);
  return digest(db);
}

describe('reconciliation over a realistic stream', () => {
  const fx = useTestStore();
  let events = 0;

  beforeAll(async () => {
    const scenario = scenarioFor({
      seed: 'recon-batches',
      payments: 80,
      month: '2025-01',
      timezone: 'UTC',
      subMerchants: 6,
    });
    for (const requests of appendChunks(reconciliationEvents(scenario, { resyncAfterDays: 2 }), 200)) {
      await fx.store.appendMany(requests);
      events += requests.reduce((n, r) => n + r.events.length, 0);
    }
    // the unlisted sellers registered later: their unknown_sub_merchant discrepancies resolve
    for (const s of scenario.subMerchants.filter((m) => !m.listed)) {
      const data = { subMerchantId: s.id, name: s.name, reserveHoldDays: 90 };
      await fx.store.append(subMerchantStream(s.id), [
        newEvent(SubMerchantRegistered, data, { idContent: { ...data, supersedes: null } }),
      ]);
      events++;
    }
  }, 120_000);

  it('gives the same rows in one batch, in odd batches and in batches of one event', async () => {
    const one = await rebuildIn(fx.db, fx.store, 100_000);
    const [ops] = await fx.db.sql<{ n: number }[]>`select count(*)::int as n from recon.operations`;
    expect(ops!.n).toBeGreaterThan(100);
    const types = await fx.db.sql<{ type: string }[]>`select distinct type from recon.discrepancies order by type`;
    // the stream exercises the rules, resolution and the sync windows, not only the happy path
    expect(types.length).toBeGreaterThanOrEqual(3);
    const [resolved] = await fx.db.sql<
      { n: number }[]
    >`select count(*)::int as n from recon.discrepancies where status = 'resolved'`;
    expect(resolved!.n).toBeGreaterThan(0);
    // a payment is judged once per append: nothing is detected and resolved inside one transaction
    const [flapped] = await fx.db.sql<{ n: number }[]>`
      select count(*)::int as n from recon.discrepancies d
      join es_events a on a.event_id = d.detected_by_event join es_events b on b.event_id = d.resolved_by_event
      where a.transaction_id = b.transaction_id`;
    expect(flapped!.n).toBe(0);
    expect(await rebuildIn(fx.db, fx.store, 37)).toEqual(one);
    expect(await rebuildIn(fx.db, fx.store, 1)).toEqual(one);
    expect(events).toBeGreaterThan(400);
  }, 240_000);

  it('keeps no state of payments outside a batch in memory (state lives in the build tables)', async () => {
    const schema = (await liveSchema(fx.db.sql, 'reconciliation'))!;
    const [payments] = await fx.db.sql.unsafe<{ n: number }[]>(
      `select count(*)::int as n from "${schema}".observations`,
    );
    const [distinct] = await fx.db.sql<
      { n: number }[]
    >`select count(distinct (pos_id, payment_id))::int as n from recon.operations`;
    // one stored row of observations per payment, read back when a later batch touches the payment
    expect(payments!.n).toBe(distinct!.n);
  });
});

describe('an acceptance that arrives before its discrepancy', () => {
  const fx = useTestStore();

  it('is kept pending, then applied when the discrepancy appears (values frozen from then on)', async () => {
    const t = at('2024-04-01T10:00:00Z');
    const key = `${POS}:pay-early:purchase:${t}`; // an operation is keyed by its time
    const id = discrepancyId('amount_mismatch', key, null);
    // e.g. accepted against a build of other rules, then rebuilt: the decision is in the log before the data
    const acceptance = newEvent(DiscrepancyAccepted, {
      discrepancyId: id,
      note: 'PSP confirmed the partial capture',
      acceptedBy: 'Olena K.',
      acceptedAt: at('2024-04-01T09:00:00Z'),
    });
    await fx.store.append(discrepancyStream(id), [acceptance]);
    await project(fx.db.sql, fx.store);
    const schema = (await liveSchema(fx.db.sql, 'reconciliation'))!;
    const pending = async () =>
      (
        await fx.db.sql.unsafe<{ id: string }[]>(
          `select discrepancy_id::text as id from "${schema}".pending_acceptances`,
        )
      ).map((r) => r.id);
    expect(await pending()).toEqual([id]);
    expect(await discrepancies(fx.db.sql)).toEqual([]);

    await appendAll(fx.store, [
      registerRows({
        paymentId: 'pay-early',
        dateTime: t,
        amount: 100_00n,
        reportId: 'r1',
        observedAt: at('2024-04-02T01:00:00Z'),
      }),
      periodRow({
        paymentId: 'pay-early',
        dateTime: t,
        amount: 100_00n,
        reportId: 'r1',
        observedAt: at('2024-04-02T01:00:00Z'),
      }),
      webhook({ paymentId: 'pay-early', processedAt: t, amount: 90_00n, receivedAt: at('2024-04-01T10:00:05Z') }),
      // past the grace period: the amount mismatch is detected now
      syncCompleted({
        from: at('2024-04-04T00:00:00Z'),
        to: at('2024-04-05T00:00:00Z'),
        completedAt: at('2024-04-05T01:00:00Z'),
        reportId: 'r2',
      }),
    ]);
    await project(fx.db.sql, fx.store);
    const rows = await discrepancies(fx.db.sql);
    expect(rows.map((r) => [r.id, r.type, r.status])).toEqual([[id, 'amount_mismatch', 'accepted']]);
    expect(rows[0]).toMatchObject({ accepted_by: 'Olena K.', accepted_note: 'PSP confirmed the partial capture' });
    const [full] = await fx.db.sql<
      { accepted_by_event: string; detected_at: Date }[]
    >`select accepted_by_event::text, detected_at from recon.discrepancies where id = ${id}`;
    expect(full!.accepted_by_event).toBe(acceptance.id);
    expect(full!.detected_at.toISOString()).toBe('2024-04-05T01:00:00.000Z');
    expect(await pending()).toEqual([]);

    // accepted: later data that would resolve it changes nothing
    const before = rows[0]!;
    await appendAll(fx.store, [
      webhook({
        paymentId: 'pay-early',
        processedAt: t,
        amount: 100_00n,
        status: 'success',
        receivedAt: at('2024-04-05T02:00:00Z'),
      }),
    ]);
    await project(fx.db.sql, fx.store);
    const after = (await discrepancies(fx.db.sql))[0]!;
    expect([after.status, after.values, after.evidence]).toEqual(['accepted', before.values, before.evidence]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as bank } from '../../projections/bank';
import { BankEntryBooked } from '../../src/events/bank-events';
import type { Projection } from '../../src/projector/projection';
import {
  listQuarantine,
  projectionBuilds,
  quarantineSummary,
  rebuildProjection,
  retryQuarantined,
  runProjections,
  type RunnerDeps,
} from '../../src/projector/runner';
import { MAX_SET_ASIDE_PER_BATCH } from '../../src/projector/set-aside';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore, NewEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendVisible, tallyDeps, tallyEvents, tallyTotals } from './tally';

/**
 * The runner sets aside an event a projection cannot apply (src/projector/set-aside.ts) and goes on;
 * the set-aside events are recorded once (projection_quarantine), listed, summed up and applied again.
 */

let db: TestDatabase;
let store: EventStore;
const ev = tallyEvents();

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await db?.drop();
});

/** The tally read model of test/projection/tally.ts, whose apply throws on events tagged with one of `poison`. */
function poisonable(name: string, poison: Set<string>, failure: () => Error = () => new Error('cannot apply')) {
  const p: Projection = {
    name,
    version: 1,
    handles: 'every event',
    async setup(tx, ctx) {
      await tx.unsafe(`create table ${ctx.schema}.seen (event_id uuid primary key, stream text, amount bigint, n int)`);
    },
    async apply(tx, events, ctx) {
      for (const e of events) if (poison.has((e.data as { tag: string }).tag)) throw failure();
      await tx`insert into ${tx(ctx.schema)}.seen ${tx(events.map((e) => ({ event_id: e.id, stream: e.stream, amount: BigInt((e.data as { amount: string }).amount), n: (e.data as { n: number }).n })))}`;
    },
    views: (ctx) => [
      `create or replace view recon.${name} as select stream, sum(amount)::int8 as total, count(*)::int8 as events from ${ctx.schema}.seen group by stream`,
    ],
  };
  return p;
}

const deps = (...ps: Projection[]): RunnerDeps => tallyDeps(db.sql, store, ...ps);

describe('a projection never wedges on one event', () => {
  it('sets the event aside, applies the rest of its batch and append, and goes on', async () => {
    const poison = new Set(['poison']);
    const p = poisonable('qa', poison);
    await appendVisible(store, db.sql, 'qa-1', [ev('x', 1), ev('poison', 1000), ev('x', 2)]);
    await appendVisible(store, db.sql, 'qa-2', [ev('x', 10)]);
    const r1 = await runProjections(deps(p));
    const rep = r1.projections.find((x) => x.name === 'qa')!;
    expect(rep.setAside.map((s) => s.error)).toEqual(['cannot apply']);
    expect(rep.applied).toBe(3);
    expect(await tallyTotals(db.sql, 'qa')).toEqual({ 'qa-1': 3n, 'qa-2': 10n });
    const [q] = await listQuarantine(db.sql, { projection: 'qa' });
    expect(q).toMatchObject({
      projection: 'qa',
      stream: 'qa-1',
      eventType: 'Tallied',
      attempts: 1,
      status: 'quarantined',
    });
    const head = (await projectionBuilds(db.sql)).find((b) => b.name === 'qa' && b.status === 'live')!;
    expect(head.checkpoint).toBe(r1.head);

    // later events are applied; the event is not set aside twice (nothing re-read)
    await appendVisible(store, db.sql, 'qa-2', [ev('x', 20)]);
    await runProjections(deps(p));
    expect(await tallyTotals(db.sql, 'qa')).toEqual({ 'qa-1': 3n, 'qa-2': 30n });
    expect(await listQuarantine(db.sql, { projection: 'qa' })).toEqual([q]);

    const summary = await quarantineSummary(db.sql);
    expect(summary.projections.find((s) => s.projection === 'qa')).toMatchObject({
      open: 1,
      events: [{ eventId: q!.eventId, error: 'cannot apply' }],
    });
    const view =
      await db.sql`select projection, event_id::text as id, status, attempts from recon.quarantined_events where projection = 'qa'`;
    expect([...view]).toEqual([{ projection: 'qa', id: q!.eventId, status: 'quarantined', attempts: 1 }]);

    // replay from zero, in batches of one: the same rows, the same event set aside (in the new build)
    await rebuildProjection(deps(p), 'qa', { batchSize: 1 });
    expect(await tallyTotals(db.sql, 'qa')).toEqual({ 'qa-1': 3n, 'qa-2': 30n });
    const after = await listQuarantine(db.sql, { projection: 'qa' });
    expect(after.map((a) => [a.eventId, a.build])).toEqual([[q!.eventId, 'rm_qa_v1_b2']]);

    // fixed: retry applies it to the build's state, once
    poison.clear();
    const retry = await retryQuarantined(deps(p), { projection: 'qa' });
    expect(retry.retried.map((x) => x.eventId)).toEqual([q!.eventId]);
    expect(retry.failed).toEqual([]);
    expect(await tallyTotals(db.sql, 'qa')).toEqual({ 'qa-1': 1003n, 'qa-2': 30n });
    expect(await listQuarantine(db.sql, { projection: 'qa' })).toEqual([]);
    // every row ever: the retired first build's (still quarantined there) and the live one's, retried
    expect(
      (await listQuarantine(db.sql, { projection: 'qa', all: true })).map((x) => [x.build, x.status, x.attempts]),
    ).toEqual([
      ['rm_qa_v1_b1', 'quarantined', 1],
      ['rm_qa_v1_b2', 'retried', 2],
    ]);
    expect((await retryQuarantined(deps(p), { projection: 'qa' })).retried).toEqual([]);
    expect(await tallyTotals(db.sql, 'qa')).toEqual({ 'qa-1': 1003n, 'qa-2': 30n });

    // and a replay from zero now gives what the retry gave
    await rebuildProjection(deps(p), 'qa');
    expect(await tallyTotals(db.sql, 'qa')).toEqual({ 'qa-1': 1003n, 'qa-2': 30n });
  });

  it('a retry that still fails leaves the event quarantined with one more attempt', async () => {
    const poison = new Set(['venom']);
    const p = poisonable('qb', poison);
    await appendVisible(store, db.sql, 'qb-1', [ev('venom', 5), ev('x', 1)]);
    await runProjections(deps(p));
    const r = await retryQuarantined(deps(p), { projection: 'qb' });
    expect(r.retried).toEqual([]);
    expect(r.failed.map((f) => f.attempts)).toEqual([2]);
    expect((await listQuarantine(db.sql, { projection: 'qb' }))[0]).toMatchObject({
      attempts: 2,
      status: 'quarantined',
    });

    // by a replay from zero: a new build applies every event in order and replaces the live one
    poison.clear();
    const replay = await retryQuarantined(deps(p), { projection: 'qb', replay: true });
    expect(replay.retried.map((x) => x.eventType)).toEqual(['Tallied']);
    expect((await tallyTotals(db.sql, 'qb'))['qb-1']).toBe(6n);
    expect(await listQuarantine(db.sql, { projection: 'qb' })).toEqual([]);
    expect((await projectionBuilds(db.sql)).filter((b) => b.name === 'qb').map((b) => [b.schema, b.status])).toEqual([
      ['rm_qb_v1_b2', 'live'],
    ]);
  });

  it("a failure that is not the events' (deadlock, cancel, lost connection) fails the batch: nothing set aside", async () => {
    const transient = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const p = poisonable('qc', new Set(['x']), transient);
    await appendVisible(store, db.sql, 'qc-1', [ev('x', 1)]);
    await expect(runProjections(deps(p))).rejects.toThrow('deadlock detected');
    expect(await listQuarantine(db.sql, { projection: 'qc' })).toEqual([]);
  });

  it(`more than ${MAX_SET_ASIDE_PER_BATCH} events failing in one batch is a defect, not poison: the batch fails`, async () => {
    const p = poisonable('qd', new Set(['all']));
    await appendVisible(
      store,
      db.sql,
      'qd-1',
      Array.from({ length: MAX_SET_ASIDE_PER_BATCH + 1 }, () => ev('all', 1)),
    );
    await expect(runProjections(deps(p))).rejects.toThrow('cannot apply');
    expect(await listQuarantine(db.sql, { projection: 'qd' })).toEqual([]);
  });
});

describe('COPY refused by the server (porsager/postgres#1173) no longer hangs', () => {
  const entry = (n: number, over: Partial<Record<string, string | null>>): NewEvent => ({
    id: crypto.randomUUID(),
    type: BankEntryBooked.type,
    version: BankEntryBooked.version,
    data: {
      accountId: 'acc-1',
      currency: 'EUR',
      direction: 'credit',
      amount: String(100 * n),
      bookingDate: '2025-03-03',
      valueDate: null,
      bankRef: `ref-${n}`,
      batchRef: null,
      detail: 0,
      endToEndId: null,
      remittance: `payment ${n}`,
      counterpartyName: null,
      counterpartyAccount: null,
      isReturn: false,
      transactionCode: null,
      statementId: 'st-1',
      ...over,
    },
  });

  it('a NUL byte in a text and a date 0000-01-01 are set aside; the bank projection goes on', {
    timeout: 60_000,
  }, async () => {
    const good = [entry(1, {}), entry(2, {})];
    const nul = entry(3, { remittance: 'a\u0000b' });
    const year0 = entry(4, { bookingDate: '0000-01-01' });
    await appendVisible(store, db.sql, 'bank-st-1', [good[0]!, nul, year0, good[1]!]);
    await appendVisible(store, db.sql, 'bank-st-2', [entry(5, {})]);
    const r = await runProjections(deps(bank));
    const set = r.projections[0]!.setAside;
    expect(set.map((s) => s.eventId).sort()).toEqual([nul.id, year0.id].sort());
    expect(set.find((s) => s.eventId === nul.id)!.error).toMatch(/0x00|null character|22021/i);
    expect(set.find((s) => s.eventId === year0.id)!.error).toMatch(/out of range|22008/i);
    const rows = await db.sql<{ bank_ref: string }[]>`select bank_ref from recon.bank_entries order by bank_ref`;
    expect(rows.map((x) => x.bank_ref)).toEqual(['ref-1', 'ref-2', 'ref-5']);
    const stuck =
      await db.sql`select pid from pg_stat_activity where datname = current_database() and state = 'idle in transaction (aborted)'`;
    expect(stuck.length).toBe(0);
  });
});

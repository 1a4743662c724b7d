import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from '../../src/events/catalog';
import {
  PeriodRecordObserved,
  RegisterRecordObserved,
  type NormalizedPeriodRecord,
  type NormalizedRegisterRecord,
} from '../../src/events/ingest-events';
import { samePeriodRow } from '../../src/events/register-row';
import {
  periodObserved,
  registerObserved,
  toAppendRequests,
  type Keyed,
  type SyncObservation,
} from '../../src/ingest/observations';
import { appendObservations } from '../../src/ingest/reobservations';
import { consolidate } from '../../src/reconciliation/matching';
import { observationOf } from '../../src/reconciliation/observations';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore, RecordedEvent } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * `appendObservations`, the append of each sync batch: which records are observed again after a batch
 * (src/ingest/reobservations.ts). Each test uses its own payments; each "run" has its own metadata, as
 * each sync run has (its own report id, its own observedAt).
 */

const POS = 'pos-re';
const window = { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' };
let db: TestDatabase;
let store: EventStore;

const registerRun = (n: number): SyncObservation => ({
  source: 'register',
  reportId: `rep-${n}`,
  window,
  observedAt: `2025-03-0${n}T00:00:00.000Z`,
});
const periodRun = (n: number): SyncObservation => ({
  source: 'period',
  reportId: null,
  window,
  observedAt: `2025-03-0${n}T00:00:00.000Z`,
});

function row(paymentId: string, over: Partial<NormalizedRegisterRecord> = {}): NormalizedRegisterRecord {
  return {
    projectId: POS,
    orderId: `order-${paymentId}`,
    paymentId,
    method: 'purchase',
    status: 'success',
    dateTime: '2025-01-10T10:00:00.000Z',
    currency: 'EUR',
    amount: '100000',
    originalAmount: '100000',
    customerFee: '0',
    merchantFee: '900',
    receiverName: 'Shop',
    receiverAmount: '60000',
    receiverFee: '600',
    reserveAmount: '0',
    cardMask: '4111********1111',
    payway: 'card',
    other: {},
    ...over,
  };
}

function period(paymentId: string, over: Partial<NormalizedPeriodRecord> = {}): NormalizedPeriodRecord {
  return {
    projectId: POS,
    orderId: `order-${paymentId}`,
    paymentId,
    method: 'purchase',
    status: 'success',
    dateTime: '2025-01-10T10:00:00.000Z',
    currency: 'EUR',
    amount: '100000',
    customerFee: '0',
    merchantFee: '900',
    other: {},
    ...over,
  };
}

const reg = (r: NormalizedRegisterRecord, run: number): Keyed =>
  registerObserved(POS, JSON.stringify(r), r, registerRun(run));
const per = (r: NormalizedPeriodRecord, run: number): Keyed =>
  periodObserved(POS, JSON.stringify(r), r, periodRun(run));

/** One batch, as the sync appends it; the number of events appended. */
async function batch(items: Keyed[], s: EventStore = store): Promise<number> {
  const results = await appendObservations(s, toAppendRequests(items));
  return results.reduce((n, r) => n + r.appended, 0);
}

/** The payment's stream, in order. */
async function stream(paymentId: string): Promise<RecordedEvent[]> {
  return store.readStream(`payment-${POS}-${paymentId}`);
}
const statuses = (es: RecordedEvent[]) => es.map((e) => (e.data as { record: { status: string } }).record.status);
const supersedes = (es: RecordedEvent[]) => es.map((e) => (e.data as { supersedes?: string }).supersedes ?? null);

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
});
afterAll(async () => {
  await db?.drop();
});

describe('appendObservations', () => {
  it('appends a re-observation superseding the latest one when a register row returns to an earlier content, and nothing when the run is repeated', async () => {
    const ok = row('p-flip');
    expect(await batch([reg(ok, 1)])).toBe(1);
    expect(await batch([reg({ ...ok, status: 'pending' }, 2)])).toBe(1);
    expect(await batch([reg(ok, 3)])).toBe(1);
    const es = await stream('p-flip');
    expect(statuses(es)).toEqual(['success', 'pending', 'success']);
    expect(supersedes(es)).toEqual([null, null, es[1]!.id]);
    expect(es[2]!.metadata).toMatchObject(registerRun(3));
    expect(await batch([reg(ok, 4)])).toBe(0);
    // and back again: a new re-observation, superseding the re-observation
    expect(await batch([reg({ ...ok, status: 'pending' }, 5)])).toBe(1);
    expect(await batch([reg(ok, 6)])).toBe(1);
    const after = await stream('p-flip');
    expect(statuses(after)).toEqual(['success', 'pending', 'success', 'pending', 'success']);
    expect(supersedes(after).slice(3)).toEqual([after[2]!.id, after[3]!.id]);
    expect(await batch([reg(ok, 7)])).toBe(0);
  });

  it('appends nothing for unchanged data re-read, in-report duplicate rows included, in one batch or split across batches', async () => {
    const x = row('p-dup');
    const y = row('p-dup', { cardMask: '4111********0000', payway: 'google_pay' });
    expect(await batch([reg(x, 1), reg(y, 1)])).toBe(2);
    expect(await batch([reg(x, 2), reg(y, 2)])).toBe(0);
    expect(await batch([reg(x, 3)])).toBe(0);
    expect(await batch([reg(y, 3)])).toBe(0);
    expect((await stream('p-dup')).length).toBe(2);
  });

  it("observes both in-report duplicate rows again, in the report's order, when both went pending and back", async () => {
    const x = row('p-dup2');
    const y = row('p-dup2', { cardMask: '4111********0000' });
    const pending = (r: NormalizedRegisterRecord) => ({ ...r, status: 'pending' as const });
    await batch([reg(x, 1), reg(y, 1)]);
    expect(await batch([reg(pending(x), 2), reg(pending(y), 2)])).toBe(2);
    expect(await batch([reg(x, 3), reg(y, 3)])).toBe(2);
    const es = await stream('p-dup2');
    expect(es.slice(4).map((e) => (e.data as { record: { cardMask: string } }).record.cardMask)).toEqual([
      x.cardMask,
      y.cardMask,
    ]);
    expect(supersedes(es).slice(4)).toEqual([es[3]!.id, es[4]!.id]);
    expect(es.slice(4).map((e) => e.metadata.reportId)).toEqual(['rep-3', 'rep-3']);
    expect(await batch([reg(x, 4), reg(y, 4)])).toBe(0);
  });

  it('appends only the missing row when a resumed run finds the first of two differing rows already stored', async () => {
    const x = row('p-resume');
    const y = row('p-resume', { cardMask: '4111********0000' });
    expect(await batch([reg(x, 1)])).toBe(1); // then killed
    expect(await batch([reg(x, 2), reg(y, 2)])).toBe(1);
    expect(supersedes(await stream('p-resume'))).toEqual([null, null]);
  });

  it("observes a new version again after the re-observation that the batch had before it, so the row's latest is the report's last", async () => {
    const a = row('p-order');
    await batch([reg(a, 1)]);
    await batch([reg({ ...a, status: 'pending' }, 2)]);
    // one report lists the row twice: first as it was (a duplicate of run 1), then with a new card mask (new)
    const w = { ...a, cardMask: '5555********4444' };
    expect(await batch([reg(a, 3), reg(w, 3)])).toBe(3);
    const es = await stream('p-order');
    const masks = es.map((e) => (e.data as { record: { cardMask: string } }).record.cardMask);
    // stored: a, pending, w (new), a again (superseding pending), w again (superseding a again)
    expect(masks).toEqual([a.cardMask, a.cardMask, w.cardMask, a.cardMask, w.cardMask]);
    expect(supersedes(es)).toEqual([null, null, null, es[1]!.id, es[3]!.id]);
    expect(await batch([reg(a, 4), reg(w, 4)])).toBe(0);
  });

  it('treats a period record without time as the row of the same amount: success at T → pending without time → success at T is observed again', async () => {
    const ok = period('p-period');
    expect(await batch([per(ok, 1)])).toBe(1);
    expect(await batch([per({ ...ok, status: 'pending', dateTime: null }, 2)])).toBe(1);
    expect(await batch([per(ok, 3)])).toBe(1);
    const es = await stream('p-period');
    expect(statuses(es)).toEqual(['success', 'pending', 'success']);
    expect(supersedes(es)).toEqual([null, null, es[1]!.id]);
    expect(await batch([per(ok, 4)])).toBe(0);
    // a register row of the same payment is another source: it neither supersedes nor is superseded
    expect(await batch([reg(row('p-period'), 4)])).toBe(1);
    expect(await batch([per(ok, 5), reg(row('p-period'), 5)])).toBe(0);
  });

  it('a duplicate first seen in a later report is a new version of the row; a later report listing the clean row alone observes it again', async () => {
    const clean = row('pay-late-dup');
    const other = row('pay-late-dup', { cardMask: '5555********4444' });
    expect(await batch([reg(clean, 1)])).toBe(1);
    // the lookback's report: the clean row (stored under run 1, a duplicate) and a second, different row of it
    expect(await batch([reg(clean, 2), reg(other, 2)])).toBe(1);
    // the night after: the clean row alone, observed again as the row's latest; then nothing more
    expect(await batch([reg(clean, 3)])).toBe(1);
    expect(await batch([reg(clean, 4)])).toBe(0);
    const s = await stream('pay-late-dup');
    expect(
      s.map((e) => [(e.data as { record: NormalizedRegisterRecord }).record.cardMask, e.metadata['reportId']]),
    ).toEqual([
      ['4111********1111', 'rep-1'],
      ['5555********4444', 'rep-2'],
      ['4111********1111', 'rep-3'],
    ]);
    expect(supersedes(s)).toEqual([null, null, s[1]!.id]);
  });

  it('reads back only streams that had a duplicate, and reads a stream again when another writer moved it before the append', async () => {
    const reads: string[] = [];
    let intrude = true;
    const spy: EventStore = {
      ...store,
      async readStream(s, o) {
        reads.push(s);
        const es = await store.readStream(s, o);
        if (intrude && s.endsWith('p-moved')) {
          intrude = false;
          // e.g. a webhook appended between the read and the re-observation's append
          await store.append(s, [reg(row('p-moved', { receiverName: 'Other Shop' }), 9).event]);
        }
        return es;
      },
    };
    const ok = row('p-moved');
    await batch([reg(ok, 1), reg(row('p-new'), 1)], spy);
    expect(reads).toEqual([]);
    await batch([reg({ ...ok, status: 'pending' }, 2)], spy);
    expect(reads).toEqual([]);
    expect(await batch([reg(ok, 3), reg(row('p-new2'), 3)], spy)).toBe(2);
    expect(reads).toEqual([`payment-${POS}-p-moved`, `payment-${POS}-p-moved`]);
    expect(statuses(await stream('p-moved'))).toEqual(['success', 'pending', 'success', 'success']);
    expect(supersedes(await stream('p-moved')).at(-1)).toBe((await stream('p-moved'))[1]!.id);
  });
});

describe('supersedes in the observation events', () => {
  it('is kept by the schemas, and a re-observation is a normal observation of its row for the reconciliation', () => {
    const ok = period('p-schema');
    const first = per(ok, 1).event;
    const data = { ...(first.data as object), supersedes: first.id };
    const recorded = (id: string, d: unknown, n: number): RecordedEvent => ({
      id,
      stream: 's',
      revision: n,
      position: { commit: BigInt(n + 1), prepare: BigInt(n + 1) },
      appendId: String(n + 1),
      type: PeriodRecordObserved.type,
      version: 1,
      data: d,
      metadata: { ...periodRun(n + 1) },
      recordedAt: new Date(0),
    });
    expect(dataOf(PeriodRecordObserved, recorded('x', data, 0)).supersedes).toBe(first.id);
    expect(
      RegisterRecordObserved.schema.safeParse({
        ...(reg(row('p-schema'), 1).event.data as object),
        supersedes: 'not-a-uuid',
      }).success,
    ).toBe(false);
    const failed = per({ ...ok, status: 'failure' }, 2).event;
    const rows = consolidate(
      [recorded(first.id, first.data, 0), recorded(failed.id, failed.data, 1), recorded('re', data, 2)].map(
        (e) => observationOf(e)!,
      ),
    );
    expect(rows.map((r) => [r.current.eventId, r.current.status, r.versions.length, r.duplicates.size])).toEqual([
      ['re', 'success', 3, 0],
    ]);
  });

  it("samePeriodRow tells period records apart as the reconciliation's consolidate does", () => {
    const at = (dateTime: string | null, amount: string) => period('p-key', { dateTime, amount });
    const pairs: Array<[NormalizedPeriodRecord, NormalizedPeriodRecord]> = [
      [at('2025-01-10T10:00:00.000Z', '100'), at('2025-01-10T10:00:00.000Z', '200')],
      [at('2025-01-10T10:00:00.000Z', '100'), at('2025-01-11T10:00:00.000Z', '100')],
      [at(null, '100'), at('2025-01-10T10:00:00.000Z', '100')],
      [at('2025-01-10T10:00:00.000Z', '100'), at(null, '200')],
      [at(null, '100'), at(null, '100')],
      [at(null, '100'), at(null, '200')],
    ];
    for (const [a, b] of pairs) {
      const ea = per(a, 1).event;
      const eb = per(b, 2).event;
      const obs = [ea, eb].map(
        (e, n) =>
          observationOf({
            id: e.id,
            stream: 's',
            revision: n,
            position: { commit: BigInt(n + 1), prepare: 0n },
            appendId: String(n + 1),
            type: e.type,
            version: e.version,
            data: e.data,
            metadata: { ...periodRun(n + 1) },
            recordedAt: new Date(0),
          })!,
      );
      expect([a.dateTime, a.amount, b.dateTime, b.amount, samePeriodRow(a, b)]).toEqual([
        a.dateTime,
        a.amount,
        b.dateTime,
        b.amount,
        consolidate(obs).length === 1,
      ]);
    }
  });
});

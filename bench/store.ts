import { getPostgreSQLEventStore, type PostgresEventStore } from '@event-driven-io/emmett-postgresql';
import { STREAM_DOES_NOT_EXIST } from '@event-driven-io/emmett';
import { connect, type Sql } from '../src/db/connect';
import { eventIdFor } from '../src/events/ids';
import { createPostgresEventStore } from '../src/store/postgres';
import type { EventStore, NewEvent, Position } from '../src/store/types';
import { inParallel, perSecond, timed, type BenchContext } from './harness';

/**
 * Issue 2's store benchmark: recon's PostgreSQL event store beside a raw multi-row INSERT of the same
 * rows into a plain table (the ceiling) and beside emmett-postgresql on the same server; then the
 * readAll catch-up rate over 1M events.
 */

const POS_ID = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
const METHODS = ['purchase', 'capture', 'refund'] as const;
const RECEIVERS = ['Kyiv Books', 'Odesa Coffee', 'Lviv Leather', 'Kharkiv Print'];

/**
 * A register record observation as ingestion writes it (RegisterRecordObserved): the record's raw JSON
 * text, its normalized form, and the observation metadata. About 600 bytes of JSON.
 */
export function registerObservation(n: number, run: string): { paymentId: string; event: NewEvent } {
  const paymentId = `${run}-${Math.floor(n / 2)}`;
  const status = n % 2 === 0 ? 'pending' : 'success';
  const method = METHODS[n % 3]!;
  const at = Date.UTC(2025, 0, 1) + n * 7_919;
  const original = 1_000 + ((n * 7_877) % 900_000);
  const fee = Math.floor(original / 50);
  const receiver = RECEIVERS[n % RECEIVERS.length]!;
  const rawRecord = {
    orderId: `o-${paymentId}`,
    paymentId,
    amount: (original / 100).toFixed(2),
    currency: 'UAH',
    method,
    status,
    dateTime: at,
    merchantFee: (fee / 100).toFixed(2),
    receiverName: receiver,
    receiverAmount: ((original - fee) / 100).toFixed(2),
    receiverFee: (fee / 100).toFixed(2),
  };
  const data = {
    posId: POS_ID,
    raw: JSON.stringify(rawRecord),
    record: {
      projectId: null,
      orderId: rawRecord.orderId,
      paymentId,
      method,
      status,
      dateTime: new Date(at).toISOString(),
      currency: 'UAH',
      amount: String(original),
      originalAmount: String(original),
      customerFee: '0',
      merchantFee: String(fee),
      receiverName: receiver,
      receiverAmount: String(original - fee),
      receiverFee: String(fee),
      reserveAmount: null,
      cardMask: '537541******7421',
      payway: 'card',
      other: {},
    },
  };
  return {
    paymentId,
    event: {
      id: eventIdFor(`register:${POS_ID}`, data.record),
      type: 'RegisterRecordObserved',
      version: 1,
      data,
      metadata: {
        reportId: `rep-${run}-${Math.floor(n / 1000)}`,
        window: { from: '2025-01-01T00:00:00.000Z', to: '2025-01-31T00:00:00.000Z' },
        observedAt: new Date(at + 3_600_000).toISOString(),
        source: 'register',
      },
    },
  };
}

const paymentStream = (paymentId: string) => `payment-${POS_ID}-${paymentId}`;

interface Row {
  stream: string;
  event: NewEvent;
}

/** `count` observations of `count / 2` payments (two per payment stream), in batches of `batch`. */
function batchesOf(run: string, count: number, batch: number): Row[][] {
  const out: Row[][] = [];
  for (let b = 0; b < count / batch; b++) {
    const rows: Row[] = [];
    for (let i = b * batch; i < (b + 1) * batch; i++) {
      const { paymentId, event } = registerObservation(i, run);
      rows.push({ stream: paymentStream(paymentId), event });
    }
    out.push(rows);
  }
  return out;
}

async function createPlainTable(sql: Sql, name: string): Promise<void> {
  // The same columns as es_events, no uniqueness, no index but the key, no trigger: the ceiling.
  await sql.unsafe(`create table ${name} (
    id bigserial primary key, event_id uuid not null, stream_id text not null, stream_revision bigint not null,
    type text not null, version int not null, data jsonb not null, metadata jsonb not null, recorded_at timestamptz not null default now())`);
}

/** The raw ceiling: one multi-row INSERT ... VALUES of the batch's rows (serialising the JSON as any writer must). */
async function rawInsert(sql: Sql, table: string, rows: readonly Row[], revisions: readonly number[]): Promise<void> {
  const values: unknown[] = [];
  const tuples: string[] = [];
  rows.forEach((r, i) => {
    const k = i * 7;
    tuples.push(
      `($${k + 1}::uuid, $${k + 2}, $${k + 3}::int8, $${k + 4}, $${k + 5}::int4, $${k + 6}::jsonb, $${k + 7}::jsonb)`,
    );
    values.push(
      r.event.id,
      r.stream,
      revisions[i]!,
      r.event.type,
      r.event.version,
      JSON.stringify(r.event.data),
      JSON.stringify(r.event.metadata ?? {}),
    );
  });
  await sql.unsafe(
    `insert into ${table} (event_id, stream_id, stream_revision, type, version, data, metadata) values ${tuples.join(', ')}`,
    values as never[],
  );
}

function emmettEvent(e: NewEvent) {
  return { type: e.type, data: e.data as Record<string, unknown>, metadata: { ...(e.metadata ?? {}), eventId: e.id } };
}

async function checkpoint(sql: Sql): Promise<void> {
  // A checkpoint between phases, so that no phase pays for the previous one's dirty pages.
  await sql`checkpoint`;
}

export async function run(ctx: BenchContext): Promise<void> {
  const quick = ctx.quick;
  const BATCH = 1_000;
  const BATCHED_EVENTS = quick ? 10_000 : 100_000;
  const WRITERS = 16;
  const SINGLE_EVENTS = quick ? 1_600 : 16_000;
  const READ_EVENTS = quick ? 100_000 : 1_000_000;
  const ROUNDS = 10;
  const sql = ctx.sql;
  const store = createPostgresEventStore(sql);
  const emmettDb = await ctx.createDatabase({ migrate: false, max: 1 });
  await emmettDb.sql.end();
  const emmett: PostgresEventStore = getPostgreSQLEventStore(emmettDb.url, {
    schema: { autoMigration: 'CreateOrUpdate' },
  });
  await emmett.schema.migrate();
  const sample = registerObservation(1, 'size').event;
  ctx.note(
    `event: RegisterRecordObserved, ${JSON.stringify(sample.data).length} bytes of data + ${JSON.stringify(sample.metadata).length} bytes of metadata`,
  );

  // The three writers take turns batch by batch (in a rotating order), so that whatever else the machine is
  // doing weighs on each of them alike.
  const turns = async (count: number, work: Record<'raw' | 'recon' | 'emmett', (i: number) => Promise<unknown>>) => {
    const ms = { raw: 0, recon: 0, emmett: 0 };
    const order = ['raw', 'recon', 'emmett'] as const;
    for (let i = 0; i < count; i++) {
      for (let k = 0; k < 3; k++) {
        const who = order[(i + k) % 3]!;
        ms[who] += (await timed(() => work[who](i))).ms;
      }
    }
    return ms;
  };
  const byStream = (rows: readonly Row[]) => {
    const m = new Map<string, NewEvent[]>();
    for (const r of rows) m.set(r.stream, [...(m.get(r.stream) ?? []), r.event]);
    return [...m];
  };

  // ---- batched appends: 1,000 events per call
  {
    ctx.note(`batched: ${BATCHED_EVENTS.toLocaleString('en-US')} events, ${BATCH} per append`);
    // (a) one stream per call, the same call for recon and emmett
    const single = batchesOf('one', BATCHED_EVENTS, BATCH).map((rows, b) => ({ stream: `import-${b}`, rows }));
    await createPlainTable(sql, 'raw_batched');
    await checkpoint(sql);
    const a = await turns(single.length, {
      raw: (b) =>
        rawInsert(
          sql,
          'raw_batched',
          single[b]!.rows.map((r) => ({ ...r, stream: single[b]!.stream })),
          single[b]!.rows.map((_, i) => i),
        ),
      recon: (b) =>
        store.append(
          single[b]!.stream,
          single[b]!.rows.map((r) => r.event),
          { expectedRevision: 'no_stream' },
        ),
      emmett: (b) =>
        emmett.appendToStream(
          single[b]!.stream,
          single[b]!.rows.map((r) => emmettEvent(r.event)),
          { expectedStreamVersion: STREAM_DOES_NOT_EXIST },
        ),
    });
    const reconRate = perSecond(BATCHED_EVENTS, a.recon);
    ctx.figure({
      name: 'batched append, 1 stream per call',
      value: reconRate,
      unit: 'events/s',
      reference: { name: 'raw multi-row INSERT', value: perSecond(BATCHED_EVENTS, a.raw) },
      target: { minRatio: 0.5, text: '>= 0.50 of raw' },
    });
    ctx.figure({
      name: 'batched append, 1 stream per call',
      value: reconRate,
      unit: 'events/s',
      reference: { name: 'emmett appendToStream', value: perSecond(BATCHED_EVENTS, a.emmett) },
      target: { minRatio: 1, text: '>= 1.00 of emmett' },
    });

    // (b) the sync's real shape: 1,000 observations of 500 payments, one appendMany (one transaction) per batch;
    // emmett appends one stream per call, so the same rows take it 500 calls per batch.
    const many = batchesOf('many', BATCHED_EVENTS, BATCH);
    await createPlainTable(sql, 'raw_many');
    await checkpoint(sql);
    const m = await turns(many.length, {
      raw: (b) =>
        rawInsert(
          sql,
          'raw_many',
          many[b]!,
          many[b]!.map((_, i) => i % 2),
        ),
      recon: (b) =>
        store.appendMany(
          byStream(many[b]!).map(([stream, events]) => ({ stream, events, expectedRevision: 'no_stream' as const })),
        ),
      emmett: async (b) => {
        for (const [stream, events] of byStream(many[b]!))
          await emmett.appendToStream(stream, events.map(emmettEvent), {
            expectedStreamVersion: STREAM_DOES_NOT_EXIST,
          });
      },
    });
    const reconManyRate = perSecond(BATCHED_EVENTS, m.recon);
    ctx.figure({
      name: 'batched appendMany, 500 streams per call',
      value: reconManyRate,
      unit: 'events/s',
      reference: { name: 'raw multi-row INSERT', value: perSecond(BATCHED_EVENTS, m.raw) },
      target: { minRatio: 0.5, text: '>= 0.50 of raw' },
    });
    ctx.figure({
      name: 'batched appendMany, 500 streams per call',
      value: reconManyRate,
      unit: 'events/s',
      reference: { name: 'emmett, 1 call per stream', value: perSecond(BATCHED_EVENTS, m.emmett) },
      target: { minRatio: 1, text: '>= 1.00 of emmett' },
    });
  }

  // ---- single-event appends from 16 concurrent writers
  {
    ctx.note(
      `single-event: ${SINGLE_EVENTS.toLocaleString('en-US')} events, one per append, ${WRITERS} concurrent writers (pool of ${WRITERS}), in ${ROUNDS} rounds`,
    );
    // One event per payment stream: concurrent webhooks of different payments.
    const rows = batchesOf('single', SINGLE_EVENTS, SINGLE_EVENTS)[0]!.map((r, i) => ({
      ...r,
      stream: paymentStream(`single-${i}`),
    }));
    const round = (i: number) => rows.slice((i * rows.length) / ROUNDS, ((i + 1) * rows.length) / ROUNDS);
    const pool = connect(ctx.url, { max: WRITERS });
    const poolStore = createPostgresEventStore(pool);
    await createPlainTable(pool, 'raw_single');
    await checkpoint(pool);
    const t = await turns(ROUNDS, {
      raw: (i) => inParallel(round(i), WRITERS, (r) => rawInsert(pool, 'raw_single', [r], [0])),
      recon: (i) =>
        inParallel(round(i), WRITERS, async (r) => {
          await poolStore.append(r.stream, [r.event], { expectedRevision: 'no_stream' });
        }),
      emmett: (i) =>
        inParallel(round(i), WRITERS, async (r) => {
          await emmett.appendToStream(r.stream, [emmettEvent(r.event)], {
            expectedStreamVersion: STREAM_DOES_NOT_EXIST,
          });
        }),
    });
    await pool.end();
    const reconRate = perSecond(SINGLE_EVENTS, t.recon);
    ctx.figure({
      name: `single-event append, ${WRITERS} writers`,
      value: reconRate,
      unit: 'events/s',
      reference: { name: 'raw single-row INSERT', value: perSecond(SINGLE_EVENTS, t.raw) },
    });
    ctx.figure({
      name: `single-event append, ${WRITERS} writers`,
      value: reconRate,
      unit: 'events/s',
      reference: { name: 'emmett appendToStream', value: perSecond(SINGLE_EVENTS, t.emmett) },
    });
  }
  await emmett.close();

  // ---- readAll catch-up over READ_EVENTS events
  {
    const [{ n }] = (await sql<{ n: bigint }[]>`select count(*)::int8 as n from es_events`) as unknown as [
      { n: bigint },
    ];
    const missing = READ_EVENTS - Number(n);
    const fill = await timed(async () => {
      for (let b = 0; b < Math.ceil(missing / BATCH); b++) {
        const size = Math.min(BATCH, missing - b * BATCH);
        const rows: Row[] = [];
        for (let i = 0; i < size; i++) {
          const { paymentId, event } = registerObservation(b * BATCH + i, 'fill');
          rows.push({ stream: paymentStream(paymentId), event });
        }
        await store.appendMany(byStream(rows).map(([stream, events]) => ({ stream, events })));
      }
    });
    ctx.note(
      `readAll: ${READ_EVENTS.toLocaleString('en-US')} events in the store (filled ${missing.toLocaleString('en-US')} at ${Math.round(perSecond(missing, fill.ms)).toLocaleString('en-US')} events/s)`,
    );
    await sql`vacuum analyze es_events`;
    await checkpoint(sql);
    for (const pageSize of [1_000, 10_000]) {
      const read = await timed(() => catchUp(store, pageSize));
      if (read.result.count !== READ_EVENTS)
        throw new Error(`readAll saw ${read.result.count} events, expected ${READ_EVENTS}`);
      ctx.figure({
        name: `readAll catch-up, pages of ${pageSize.toLocaleString('en-US')}`,
        value: perSecond(READ_EVENTS, read.ms),
        unit: 'events/s',
        target: { min: 100_000, text: '>= 100,000 events/s' },
      });
    }
  }
}

/** A follower from the start: every page after the last position seen, until an empty page. */
async function catchUp(store: EventStore, maxCount: number): Promise<{ count: number; last: Position | undefined }> {
  let from: Position | undefined;
  let count = 0;
  for (;;) {
    const page = await store.readAll(from, { maxCount });
    if (page.length === 0) return { count, last: from };
    count += page.length;
    from = page[page.length - 1]!.position;
  }
}

import type postgres from 'postgres';
import { copyField as field, copyFrom } from '../db/bulk-write';
import type { Sql } from '../db/connect';
import { constraintOf, isSqlState } from '../db/errors';
import { EventIdConflictError } from './errors';
import { checkStreamName, prepareEvent } from './prepare';
import type { AppendResult, BulkAppendResult, BulkEvent, Position } from './types';

/**
 * The PostgreSQL bulk append (EventStore.appendBulk, docs/store.md "Bulk append"). One transaction: the
 * events are copied (COPY, text format) into a temporary staging table while the caller still produces
 * them, and every few megabytes the staged chunk goes into es_events with one INSERT ... SELECT, while
 * the next chunk is being produced. So the parsing in node and the server's inserting overlap, and the
 * transaction makes the whole bulk one append (one transaction id: one append id, one commit position).
 *
 * The common case, nothing of the chunk stored yet, inserts the staged rows as they are: the unique
 * index on event_id is the check, and a violation rolls the chunk back to its savepoint and takes the
 * set-based path, which refuses conflicting content and leaves out what is stored (or repeated).
 */

type Tx = postgres.TransactionSql<{ bigint: bigint }>;

/**
 * Staged text per chunk before it is inserted: large enough that a chunk's statements weigh little, and that
 * a bulk of a million bank entries takes fewer than 64 savepoints (more subtransactions than a backend caches
 * make every other session's snapshots slower while the bulk runs). Text produced ahead of the copy is held,
 * encoded, up to two chunks (memory stays flat whatever the size of the bulk).
 */
const CHUNK_BYTES = 16 * 1024 * 1024;
const MAX_ATTEMPTS = 3;

interface Piece {
  /** COPY text, encoded as soon as it is made (see produce) */
  readonly bytes: Buffer;
  /** streams whose first event is in this piece */
  readonly newStreams: readonly string[];
  /** every stream with an event in this piece: a chunk's revisions are sent for its own streams only */
  readonly streams: readonly string[];
}

/** Text produced by the caller's batches, handed to the copy in pieces, with flow control both ways. */
class Queue {
  readonly pieces: Piece[] = [];
  bytes = 0;
  done = false;
  failure: unknown;
  stopped = false;
  private readonly waiting = new Set<() => void>();

  push(p: Piece): void {
    this.pieces.push(p);
    this.bytes += p.bytes.length;
    this.notify();
  }
  shift(): Piece | undefined {
    const p = this.pieces.shift();
    if (p) this.bytes -= p.bytes.length;
    this.notify();
    return p;
  }
  notify(): void {
    for (const w of this.waiting) w();
    this.waiting.clear();
  }
  /** Until something changes (a piece pushed or taken, the end, a stop). */
  changed(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.add(resolve);
    });
  }
}

interface StreamState {
  /** revision of the stream's last event now (in this transaction) */
  revision: number;
  /** the stream's events of this bulk handed to the server so far (their `n` runs from 1) */
  staged: number;
  appended: number;
  duplicates: number;
  position: Position | undefined;
}

/** `chunkBytes`: staged text per chunk (tests make it small to cross many chunks). */
export function createBulkAppend(
  sql: Sql,
  chunkBytes = CHUNK_BYTES,
): (batches: AsyncIterable<readonly BulkEvent[]>) => Promise<BulkAppendResult> {
  return (batches) => sql.begin((tx) => bulkIn(tx, batches, chunkBytes)) as Promise<BulkAppendResult>;
}

const STAGE_COLUMNS = [
  'ord',
  'event_id',
  'stream_id',
  'n',
  'type',
  'version',
  'label',
  'data',
  'metadata',
  'content_hash',
] as const;

/**
 * Advisory lock class of the bulk append (the projections' is 7315). A bulk takes its streams' rows chunk by
 * chunk, in the order its events come: two bulks meeting the same streams in other orders (two imports of
 * statements of the same accounts) would deadlock, and a bulk cannot be retried (its source is read once).
 * So bulks run one at a time; ordinary appends are not held back by it.
 */
const BULK_LOCK_CLASS = 7316;

async function bulkIn(tx: Tx, batches: AsyncIterable<readonly BulkEvent[]>, chunkBytes: number) {
  await tx`select pg_advisory_xact_lock(${BULK_LOCK_CLASS}, 0)`;
  await tx`create temp table es_bulk_stage (
    ord int8 primary key, event_id uuid not null, stream_id text not null, n int8 not null, type text not null,
    version int4 not null, label int4 not null, data json not null, metadata json not null,
    content_hash text not null) on commit drop`;
  // the staged chunk is read in its order through its key, never sorted
  await tx`set local enable_sort = off`;
  const queue = new Queue();
  const labels: string[] = [];
  const totals: number[] = [];
  const duplicatesByLabel: number[] = [];
  const streams = new Map<string, StreamState>();
  const producing = produce(batches, queue, labels, totals, 2 * chunkBytes).catch((e: unknown) => {
    queue.failure = e;
    queue.notify();
  });
  try {
    for (;;) {
      while (queue.pieces.length === 0 && !queue.done && queue.failure === undefined) await queue.changed();
      if (queue.failure !== undefined) throw queue.failure;
      if (queue.pieces.length === 0) break;
      const fresh: string[] = [];
      const touched = new Set<string>();
      // through the one bulk writer: a COPY the server refuses rejects here (src/db/bulk-write.ts)
      await copyFrom(tx, 'es_bulk_stage', STAGE_COLUMNS, chunkOf(queue, fresh, touched, chunkBytes));
      await insertChunk(tx, streams, fresh, touched, duplicatesByLabel);
      await tx`truncate es_bulk_stage`;
    }
    const written = [...streams].filter(([, st]) => st.appended > 0);
    if (written.length > 0)
      await tx`update es_streams as s set revision = v.rev
        from unnest(${written.map(([k]) => k)}::text[], ${written.map(([, st]) => st.revision)}::int8[]) as v(stream, rev)
        where s.stream_id = v.stream`;
  } finally {
    queue.stopped = true;
    queue.notify();
    await producing;
  }
  const byLabel = new Map<string, { appended: number; duplicates: number }>();
  labels.forEach((l, i) => {
    const duplicates = duplicatesByLabel[i] ?? 0;
    byLabel.set(l, { appended: totals[i]! - duplicates, duplicates });
  });
  const results = [...streams]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(
      ([stream, st]): AppendResult => ({
        stream,
        revision: st.revision,
        appended: st.appended,
        duplicates: st.duplicates,
        position: st.position,
      }),
    );
  return { streams: results, byLabel };
}

/** Reads the caller's batches into the queue as COPY text, waiting while the queue is full. */
async function produce(
  batches: AsyncIterable<readonly BulkEvent[]>,
  queue: Queue,
  labels: string[],
  totals: number[],
  queueBytes: number,
): Promise<void> {
  const labelNo = new Map<string, number>();
  const nOf = new Map<string, number>();
  let ord = 0;
  for await (const batch of batches) {
    if (queue.stopped) return;
    let text = '';
    const newStreams: string[] = [];
    const inPiece = new Set<string>();
    for (const b of batch) {
      // one event at a time: validation and serialisation as every append, without holding the bulk's ids
      const seenStream = nOf.get(b.stream);
      if (seenStream === undefined) checkStreamName(b.stream);
      const p = prepareEvent(b.stream, b.event);
      const label = b.label ?? p.type;
      let l = labelNo.get(label);
      if (l === undefined) {
        l = labels.length;
        labelNo.set(label, l);
        labels.push(label);
        totals.push(0);
      }
      totals[l]!++;
      const n = (seenStream ?? 0) + 1;
      if (n === 1) newStreams.push(p.stream);
      inPiece.add(p.stream);
      nOf.set(p.stream, n);
      text +=
        `${ord++}\t${p.id}\t${field(p.stream)}\t${n}\t${field(p.type)}\t${p.version}\t${l}\t` +
        `${field(p.dataJson)}\t${field(p.metadataJson)}\t${p.contentHash}\n`;
    }
    // encoded now: the queued pieces live outside the JS heap as flat bytes, so the many small strings a
    // piece is made of die young instead of surviving in the queue into the old generation, whose
    // collections would then come later and later as the bulk goes on (peak memory growing with its size)
    if (text !== '') queue.push({ bytes: Buffer.from(text), newStreams, streams: [...inPiece] });
    while (queue.bytes > queueBytes && !queue.stopped) await queue.changed();
  }
  queue.done = true;
  queue.notify();
}

/** The pieces of one chunk, as they come; the streams first seen in it go in `fresh`, all of its streams in `touched`. */
async function* chunkOf(
  queue: Queue,
  fresh: string[],
  touched: Set<string>,
  chunkBytes: number,
): AsyncGenerator<Buffer> {
  let bytes = 0;
  while (bytes < chunkBytes) {
    while (queue.pieces.length === 0 && !queue.done && queue.failure === undefined) await queue.changed();
    if (queue.failure !== undefined) throw queue.failure;
    const p = queue.shift();
    if (!p) return;
    for (const st of p.newStreams) fresh.push(st);
    for (const st of p.streams) touched.add(st);
    bytes += p.bytes.length;
    yield p.bytes;
  }
}

/**
 * Moves the staged chunk into es_events. The streams first seen in it are taken (row lock, in sorted
 * order, created at -1 when new) before anything of it is inserted.
 */
async function insertChunk(
  tx: Tx,
  streams: Map<string, StreamState>,
  fresh: readonly string[],
  touched: ReadonlySet<string>,
  duplicatesByLabel: number[],
): Promise<void> {
  if (fresh.length > 0) {
    const taken = await tx<{ stream_id: string; revision: bigint }[]>`
      insert into es_streams (stream_id, revision) select s, -1 from unnest(${[...fresh].sort()}::text[]) as s order by s
      on conflict (stream_id) do update set revision = es_streams.revision
      returning stream_id, revision`;
    for (const r of taken)
      streams.set(r.stream_id, {
        revision: Number(r.revision),
        staged: 0,
        appended: 0,
        duplicates: 0,
        position: undefined,
      });
  }
  for (let attempt = 1; ; attempt++) {
    try {
      // fast path: a stream's event numbered n in the bulk takes revision (revision before the bulk's
      // first event of the stream) + n, as long as nothing was left out (offset = revision - staged)
      // of the chunk's own streams: every stream of the bulk so far made each chunk's text grow with the bulk
      const offsets = Object.fromEntries(
        [...touched].map((k) => [k, streams.get(k)!.revision - streams.get(k)!.staged]),
      );
      const rows = await tx.savepoint(
        (sp) => sp<{ stream_id: string; events: bigint; last_rev: bigint; last_pos: bigint; tx: string }[]>`
          with inserted as (
            insert into es_events (event_id, stream_id, stream_revision, type, version, data, metadata, content_hash)
            select s.event_id, s.stream_id, (${JSON.stringify(offsets)}::text::jsonb ->> s.stream_id)::int8 + s.n, s.type,
                   s.version, s.data, s.metadata, s.content_hash
            from es_bulk_stage s order by s.ord
            returning stream_id, stream_revision, global_position, transaction_id)
          select stream_id, count(*) as events, max(stream_revision) as last_rev, max(global_position) as last_pos,
                 min(transaction_id::text) as tx
          from inserted group by stream_id`,
      );
      for (const r of rows) {
        const st = streams.get(r.stream_id)!;
        st.appended += Number(r.events);
        st.staged += Number(r.events);
        st.revision = Number(r.last_rev);
        st.position = { commit: BigInt(r.tx), prepare: r.last_pos };
      }
      return;
    } catch (e) {
      if (!(isSqlState(e, 'uniqueViolation') && constraintOf(e) === 'es_events_event_id_unique')) throw e;
    }
    // some ids of the chunk are stored (a re-import, an earlier chunk, a concurrent append) or repeated
    try {
      await tx.savepoint((sp) => insertLeavingOutKnown(sp, streams, touched, duplicatesByLabel));
      return;
    } catch (e) {
      const raced = isSqlState(e, 'uniqueViolation') && constraintOf(e) === 'es_events_event_id_unique';
      if (!raced || attempt >= MAX_ATTEMPTS) throw e;
    }
  }
}

/**
 * The set-based path: refuses an id stored or repeated with other content or in another stream, leaves
 * out the ids stored (or repeated) with the same content, and numbers the rest on from each stream's
 * revision. Runs inside a savepoint: a refusal or a race leaves the chunk staged and nothing of it written.
 */
async function insertLeavingOutKnown(
  tx: Tx,
  streams: Map<string, StreamState>,
  touched: ReadonlySet<string>,
  duplicatesByLabel: number[],
): Promise<void> {
  await tx`analyze es_bulk_stage`;
  const [clash] = await tx<{ id: string; stream: string; other: string; same_content: boolean }[]>`
    select s.event_id::text as id, s.stream_id as stream, e.stream_id as other, e.content_hash = s.content_hash as same_content
    from es_bulk_stage s join es_events e on e.event_id = s.event_id
    where e.stream_id <> s.stream_id or e.content_hash <> s.content_hash
    union all
    select s.event_id::text, s.stream_id, t.stream_id, t.content_hash = s.content_hash
    from es_bulk_stage s join es_bulk_stage t on t.event_id = s.event_id and t.ord < s.ord
    where t.stream_id <> s.stream_id or t.content_hash <> s.content_hash
    limit 1`;
  if (clash)
    throw new EventIdConflictError(
      clash.id,
      clash.stream,
      clash.other === clash.stream ? 'different_content' : 'other_stream',
      clash.other,
    );
  const staged = await tx<{ stream_id: string; events: bigint }[]>`
    select stream_id, count(*) as events from es_bulk_stage group by stream_id`;
  const gone = await tx<{ label: number; stream_id: string; events: bigint }[]>`
    with gone as (
      delete from es_bulk_stage s
      where exists (select 1 from es_events e where e.event_id = s.event_id)
         or exists (select 1 from es_bulk_stage t where t.event_id = s.event_id and t.ord < s.ord)
      returning s.label, s.stream_id)
    select label, stream_id, count(*) as events from gone group by label, stream_id`;
  const revisions = Object.fromEntries([...touched].map((k) => [k, streams.get(k)!.revision]));
  const rows = await tx<{ stream_id: string; events: bigint; last_rev: bigint; last_pos: bigint; tx: string }[]>`
    with inserted as (
      insert into es_events (event_id, stream_id, stream_revision, type, version, data, metadata, content_hash)
      select s.event_id, s.stream_id,
             (${JSON.stringify(revisions)}::text::jsonb ->> s.stream_id)::int8 + row_number() over (partition by s.stream_id order by s.ord),
             s.type, s.version, s.data, s.metadata, s.content_hash
      from es_bulk_stage s order by s.ord
      returning stream_id, stream_revision, global_position, transaction_id)
    select stream_id, count(*) as events, max(stream_revision) as last_rev, max(global_position) as last_pos,
           min(transaction_id::text) as tx
    from inserted group by stream_id`;
  // counted only once the chunk is in: a savepoint rolled back leaves the counts as they were
  for (const r of staged) streams.get(r.stream_id)!.staged += Number(r.events);
  for (const r of gone) {
    duplicatesByLabel[r.label] = (duplicatesByLabel[r.label] ?? 0) + Number(r.events);
    streams.get(r.stream_id)!.duplicates += Number(r.events);
  }
  for (const r of rows) {
    const st = streams.get(r.stream_id)!;
    st.appended += Number(r.events);
    st.revision = Number(r.last_rev);
    st.position = { commit: BigInt(r.tx), prepare: r.last_pos };
  }
}

import type postgres from 'postgres';
import type { Sql } from '../db/connect';
import { constraintOf, isConnectionError, isSqlState } from '../db/errors';
import {
  EventIdConflictError,
  StoreUnavailableError,
  TransactionCounterBehindError,
  checkExpected,
  meetsExpected,
} from './errors';
import { createBulkAppend } from './postgres-bulk';
import { prepareAppend, type PreparedEvent } from './prepare';
import {
  formatPosition,
  type AppendRequest,
  type AppendResult,
  type EventStore,
  type NewEvent,
  type Position,
  type RecordedEvent,
} from './types';

interface EventRow {
  global_position: bigint;
  transaction_id: string;
  event_id: string;
  stream_id: string;
  stream_revision: bigint;
  type: string;
  version: number;
  data: unknown;
  metadata: Record<string, unknown>;
  recorded_at: Date;
}

function toRecorded(r: EventRow): RecordedEvent {
  return {
    id: r.event_id,
    stream: r.stream_id,
    revision: Number(r.stream_revision),
    position: { commit: BigInt(r.transaction_id), prepare: r.global_position },
    // One append is one transaction (appendMany's, or the one statement of es_append_any), on every row
    // ever written: the transaction id is the append's id, so no column of its own is needed.
    appendId: r.transaction_id,
    type: r.type,
    version: r.version,
    data: r.data,
    metadata: r.metadata,
    recordedAt: r.recorded_at,
  };
}

// Ordering always names e.transaction_id: a bare "transaction_id" in ORDER BY would mean the text alias
// below and sort "10000" before "9999".
const COLUMNS =
  'global_position, transaction_id::text as transaction_id, event_id::text as event_id, stream_id, stream_revision, type, version, data, metadata, recorded_at';

/**
 * The commit-order bound of a read: the oldest transaction still running in the statement's snapshot
 * (pg_snapshot_xmin), leaving out the transactions of other databases listed in parameter `param`.
 * Events of transactions below it are final, and every later commit sorts after them.
 */
const VISIBLE_BELOW = (param: string) => `(
  select coalesce(
    (select min(x) from pg_snapshot_xip(pg_current_snapshot()) as x where not (x::xid::text = any(${param}::text[]))),
    pg_snapshot_xmax(pg_current_snapshot())))`;

/**
 * The rows to insert as one JSON text, with each event's data and metadata spliced in as they are
 * (already JSON). Sending them as text arrays instead made the driver escape every event's JSON again,
 * which cost more than the rest of the append together.
 */
function rowsJson(fresh: readonly PreparedEvent[], revisions: readonly number[]): string {
  let out = '[';
  for (let i = 0; i < fresh.length; i++) {
    const p = fresh[i]!;
    out += `${i ? ',' : ''}{"ord":${i},"id":"${p.id}","stream":${JSON.stringify(p.stream)},"rev":${revisions[i]},"type":${JSON.stringify(p.type)},"version":${p.version},"data":${p.dataJson},"metadata":${p.metadataJson},"hash":"${p.contentHash}"}`;
  }
  return `${out}]`;
}

/**
 * The rows of the one-call append (es_append_any, migration 0500) as one text: fields split by U+001F,
 * rows by U+001E. PostgreSQL then validates each event's JSON once as it becomes json, where reading a
 * JSON array of rows parsed every byte twice more (measured: 28 against 17 ms of server time per 1,000
 * register observations). JSON text never holds a raw control character; a stream name or type that
 * does cannot be sent this way (undefined here), and its append takes the transaction below (a NUL is
 * refused before, by prepareAppend: PostgreSQL text cannot hold it).
 */
const FIELD = '\x1f';
const ROW = '\x1e';
const SEPARATORS = /[\x00\x1e\x1f]/;
function rowsText(fresh: readonly PreparedEvent[]): string | undefined {
  let out = '';
  for (let i = 0; i < fresh.length; i++) {
    const p = fresh[i]!;
    if (SEPARATORS.test(p.stream) || SEPARATORS.test(p.type)) return undefined;
    out += `${i ? ROW : ''}${i}${FIELD}${p.id}${FIELD}${p.stream}${FIELD}${p.type}${FIELD}${p.version}${FIELD}${p.dataJson}${FIELD}${p.metadataJson}${FIELD}${p.contentHash}`;
  }
  return out;
}

/** Two concurrent appends of the same new id: the loser retries once and then sees it as a duplicate. */
const MAX_ATTEMPTS = 3;

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isConnectionError(e)) throw new StoreUnavailableError(`event store unavailable: ${(e as Error).message}`, e);
    if (isSqlState(e, 'transactionCounterBehind')) {
      const hint = (e as { hint?: string }).hint;
      throw new TransactionCounterBehindError(`${(e as Error).message}${hint ? `. ${hint}` : ''}`, e);
    }
    throw e;
  }
}

type StoredIds = ReadonlyMap<string, { readonly stream: string; readonly hash: string }>;

/**
 * Sorts the events of an append into new ones and ones already stored (counted per stream), and refuses
 * an id stored with other content or in another stream. Shared by both append paths.
 */
function sortOut(prepared: readonly PreparedEvent[], stored: StoredIds) {
  const fresh: PreparedEvent[] = [];
  const freshCount = new Map<string, number>();
  const duplicates = new Map<string, number>();
  for (const p of prepared) {
    const k = stored.get(p.id);
    if (!k) {
      fresh.push(p);
      freshCount.set(p.stream, (freshCount.get(p.stream) ?? 0) + 1);
      continue;
    }
    if (k.stream !== p.stream) throw new EventIdConflictError(p.id, p.stream, 'other_stream', k.stream);
    if (k.hash !== p.contentHash) throw new EventIdConflictError(p.id, p.stream, 'different_content', k.stream);
    duplicates.set(p.stream, (duplicates.get(p.stream) ?? 0) + 1);
  }
  return { fresh, freshCount, duplicates };
}

/** Keeps the latest position appended per stream. */
function notePosition(last: Map<string, Position>, stream: string, pos: Position): void {
  const prior = last.get(stream);
  if (!prior || prior.prepare < pos.prepare) last.set(stream, pos);
}

function resultsOf(
  requests: readonly AppendRequest[],
  revision: ReadonlyMap<string, number>,
  sorted: { freshCount: ReadonlyMap<string, number>; duplicates: ReadonlyMap<string, number> },
  last: ReadonlyMap<string, Position>,
): AppendResult[] {
  return requests.map(
    (r): AppendResult => ({
      stream: r.stream,
      revision: revision.get(r.stream) ?? -1,
      appended: sorted.freshCount.get(r.stream) ?? 0,
      duplicates: sorted.duplicates.get(r.stream) ?? 0,
      position: last.get(r.stream),
    }),
  );
}

type Tx = postgres.TransactionSql<{ bigint: bigint }>;

/** PostgreSQL backend: events in the same database as the read models. */
export function createPostgresEventStore(
  sql: Sql,
  opts: { ownsConnection?: boolean; bulkChunkBytes?: number } = {},
): EventStore {
  const bulk = createBulkAppend(sql, opts.bulkChunkBytes);
  const ahead: ReadAhead = { next: undefined };
  const appendMany = (requests: readonly AppendRequest[]) => appendManyRetried(sql, requests);
  return {
    backend: 'postgres',
    async append(
      stream: string,
      events: readonly NewEvent[],
      opts: { expectedRevision?: import('./types').ExpectedRevision } = {},
    ) {
      const [r] = await appendMany([{ stream, events, expectedRevision: opts.expectedRevision ?? 'any' }]);
      return r!;
    },
    appendMany,
    appendBulk: (batches) => guard(() => bulk(batches)),
    readStream: (stream, opts = {}) => readStream(sql, stream, opts),
    readStreams: (streams, opts = {}) => readStreams(sql, streams, opts),
    readAll: (from, opts = {}) => readAll(sql, ahead, from, opts.maxCount ?? 1000),
    headPosition: () => headPosition(sql),
    readAt: (position) => readAt(sql, position),
    async watch(onAppended) {
      // es_events notifies 'recon_events' after every insert statement (migration 0200); the third
      // argument runs on every (re)connection of the listening connection
      const l = await sql.listen('recon_events', onAppended, onAppended);
      return () => l.unlisten();
    },
    async close() {
      const pending = ahead.next;
      ahead.next = undefined;
      await pending?.page;
      if (opts.ownsConnection) await sql.end({ timeout: 5 });
    },
  };
}

async function appendManyRetried(sql: Sql, requests: readonly AppendRequest[]): Promise<AppendResult[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await guard(() => appendOnce(sql, requests));
    } catch (e) {
      const raced = isSqlState(e, 'uniqueViolation') && constraintOf(e) === 'es_events_event_id_unique';
      if (!raced || attempt >= MAX_ATTEMPTS) throw e;
    }
  }
}

/** One attempt: ingestion's appends in one statement, any other in a transaction of two statements. */
async function appendOnce(sql: Sql, requests: readonly AppendRequest[]): Promise<AppendResult[]> {
  const prepared = prepareAppend(requests);
  const asText =
    prepared.length > 0 && requests.every((r) => r.events.length > 0 && (r.expectedRevision ?? 'any') === 'any')
      ? rowsText(prepared)
      : undefined;
  if (asText !== undefined) return appendAnyInOneStatement(sql, requests, prepared, asText);
  return sql.begin((tx) => appendInTransaction(tx, requests, prepared)) as Promise<AppendResult[]>;
}

/**
 * Two statements per append (round trips weigh most on small appends): the streams locked with the ids
 * already stored, then the new events inserted with the streams' revisions moved on.
 */
async function appendInTransaction(
  tx: Tx,
  requests: readonly AppendRequest[],
  prepared: readonly PreparedEvent[],
): Promise<AppendResult[]> {
  const ids = prepared.map((p) => p.id);
  const { current, known } = await lockStreams(tx, requests, prepared, ids);
  let sorted = sortOut(prepared, known);
  if (
    requests.some(
      (r) =>
        sorted.freshCount.has(r.stream) && !meetsExpected(r.expectedRevision ?? 'any', current.get(r.stream) ?? -1),
    )
  ) {
    // The rare path, so the common one keeps its two statements. The ids above were read with the
    // snapshot the statement took before it waited for the streams' locks, while the revisions are
    // the ones the lock holder left: an append that committed during the wait (the original of this
    // call, when this one is its retry) moved the revision, but its ids were not seen. Read them again
    // now that the locks are held (a fresh snapshot) before refusing: a retry whose events are all
    // stored now is a duplicate, not a WRONG_EXPECTED_REVISION.
    const again = new Map<string, { stream: string; hash: string }>();
    for (const r of await tx<{ event_id: string; stream_id: string; content_hash: string }[]>`
      select event_id::text as event_id, stream_id, content_hash from es_events where event_id = any(${ids}::uuid[])`) {
      again.set(r.event_id, { stream: r.stream_id, hash: r.content_hash });
    }
    sorted = sortOut(prepared, again);
  }
  const { fresh, freshCount } = sorted;
  for (const r of requests) {
    if (freshCount.has(r.stream)) checkExpected(r.stream, r.expectedRevision ?? 'any', current.get(r.stream) ?? -1);
  }
  const revisions: number[] = [];
  const next = new Map(current);
  for (const p of fresh) {
    const rev = (next.get(p.stream) ?? -1) + 1;
    next.set(p.stream, rev);
    revisions.push(rev);
  }
  const lastPosition = fresh.length
    ? await insertFresh(tx, fresh, revisions, [...freshCount.keys()].sort(), next)
    : new Map<string, Position>();
  return resultsOf(requests, next, sorted, lastPosition);
}

/**
 * The first statement takes every stream that has events, creating it at -1 if new, with a row lock in
 * sorted order (concurrent multi-stream appends cannot deadlock) and its current revision, and reads the
 * ids already stored. Requests without events: their revision is only read, to be reported.
 */
async function lockStreams(
  tx: Tx,
  requests: readonly AppendRequest[],
  prepared: readonly PreparedEvent[],
  ids: readonly string[],
): Promise<{ current: Map<string, number>; known: Map<string, { stream: string; hash: string }> }> {
  const withEvents = [...new Set(prepared.map((p) => p.stream))].sort();
  const rows = ids.length
    ? await tx<{ kind: 's' | 'e'; key: string; value: string; hash: string | null }[]>`
        with locked as (
          insert into es_streams (stream_id, revision) select s, -1 from unnest(${withEvents}::text[]) as s order by s
          on conflict (stream_id) do update set revision = es_streams.revision
          returning stream_id, revision)
        select 's' as kind, stream_id as key, revision::text as value, null::text as hash from locked
        union all
        select 'e', event_id::text, stream_id, content_hash from es_events where event_id = any(${ids as string[]}::uuid[])`
    : [];
  const current = new Map<string, number>();
  const known = new Map<string, { stream: string; hash: string }>();
  for (const r of rows) {
    if (r.kind === 's') current.set(r.key, Number(r.value));
    else known.set(r.key, { stream: r.value, hash: r.hash! });
  }
  const others = [...new Set(requests.map((r) => r.stream))].filter((st) => !current.has(st));
  if (others.length) {
    for (const r of await tx<{ stream_id: string; revision: bigint }[]>`
      select stream_id, revision from es_streams where stream_id = any(${others}::text[])`)
      current.set(r.stream_id, Number(r.revision));
  }
  return { current, known };
}

/**
 * The second statement inserts the events and moves the streams' revisions on; returns the last position
 * appended per stream.
 */
async function insertFresh(
  tx: Tx,
  fresh: readonly PreparedEvent[],
  revisions: readonly number[],
  writing: readonly string[],
  next: ReadonlyMap<string, number>,
): Promise<Map<string, Position>> {
  const updated = writing.map((st) => next.get(st)!);
  const inserted = await tx<{ stream_id: string; global_position: bigint; transaction_id: string }[]>`
    with inserted as (
      insert into es_events (event_id, stream_id, stream_revision, type, version, data, metadata, content_hash)
      -- json_to_recordset makes a JSON null an SQL NULL; data is never absent (prepareAppend), so
      -- a NULL here is an event whose data is JSON null, stored as such (as the one-call path does)
      select id, stream, rev, type, version, coalesce(data, 'null'::json), metadata, hash
      from json_to_recordset(${rowsJson(fresh, revisions)}::text::json)
        as t(ord int4, id uuid, stream text, rev int8, type text, version int4, data json, metadata json, hash text)
      order by ord
      returning stream_id, global_position, transaction_id::text as transaction_id),
    moved as (
      update es_streams as s set revision = v.rev
      from unnest(${writing as string[]}::text[], ${updated}::int8[]) as v(stream, rev) where s.stream_id = v.stream)
    select stream_id, global_position, transaction_id from inserted`;
  const lastPosition = new Map<string, Position>();
  for (const row of inserted)
    notePosition(lastPosition, row.stream_id, {
      commit: BigInt(row.transaction_id),
      prepare: row.global_position,
    });
  return lastPosition;
}

/**
 * The append of ingestion (every request has events, every expectation is "any") as one call of
 * es_append_any (migration 0500), so one round trip and one implicit transaction instead of four
 * round trips: webhooks wait for it. It reads the ids already stored, and unless one of them has other
 * content or another stream (then nothing is written and the error is raised below, as the general
 * path does), moves each stream's revision on by its number of new events in a single upsert that also
 * takes the stream's row lock, and inserts the new events numbered from the revision it found. A
 * concurrent append of the same new id ends in a unique violation, which appendMany retries.
 */
async function appendAnyInOneStatement(
  sql: Sql,
  requests: readonly AppendRequest[],
  prepared: readonly PreparedEvent[],
  asText: string,
): Promise<AppendResult[]> {
  const rows = await sql<{ kind: 'k' | 's' | 'c' | 'e'; key: string; value: string; extra: string | null }[]>`
    select kind, key, value, extra from es_append_any(${asText}::text)`;
  const known = new Map<string, { stream: string; hash: string }>();
  const revision = new Map<string, number>();
  const lastPosition = new Map<string, Position>();
  for (const r of rows) {
    if (r.kind === 'k') known.set(r.key, { stream: r.value, hash: r.extra! });
    else if (r.kind === 's' || r.kind === 'c') revision.set(r.key, Number(r.value));
    else notePosition(lastPosition, r.key, { commit: BigInt(r.extra!), prepare: BigInt(r.value) });
  }
  return resultsOf(requests, revision, sortOut(prepared, known), lastPosition);
}

/**
 * Transactions running in other databases of the same server, read before the query's snapshot is
 * taken. They cannot write this database's events, so readers need not wait for them (the server-wide
 * xmin alone would hold every reader back behind, say, a long migration in another database).
 * Dropping only these from the snapshot's in-progress list is safe: an xid of this database is never
 * in the list, and a transaction that started after this read stays in the bound (it only delays).
 */
async function otherDatabasesXids(sql: Sql): Promise<string[]> {
  const rows = await sql<{ x: string }[]>`
    select backend_xid::text as x from pg_stat_activity
    where backend_xid is not null and datname is distinct from current_database()`;
  return rows.map((r) => r.x);
}

async function readPage(sql: Sql, from: Position | undefined, limit: number): Promise<RecordedEvent[]> {
  const rows = await guard(async () => {
    const others = await otherDatabasesXids(sql);
    return from
      ? sql.unsafe<EventRow[]>(
          `select ${COLUMNS} from es_events e
           where (e.transaction_id, e.global_position) > ($1::text::xid8, $2::int8)
             and e.transaction_id < ${VISIBLE_BELOW('$4')}
           order by e.transaction_id, e.global_position limit $3`,
          [from.commit.toString(), from.prepare.toString(), limit, others],
        )
      : sql.unsafe<EventRow[]>(
          `select ${COLUMNS} from es_events e
           where e.transaction_id < ${VISIBLE_BELOW('$2')}
           order by e.transaction_id, e.global_position limit $1`,
          [limit, others],
        );
  });
  return rows.map(toRecorded);
}

async function readStream(
  sql: Sql,
  stream: string,
  opts: { fromRevision?: number; maxCount?: number },
): Promise<RecordedEvent[]> {
  const from = opts.fromRevision ?? 0;
  const limit = opts.maxCount ?? 1_000_000;
  const rows = await guard(() =>
    sql.unsafe<EventRow[]>(
      `select ${COLUMNS} from es_events where stream_id = $1 and stream_revision >= $2 order by stream_revision limit $3`,
      [stream, from, limit],
    ),
  );
  return rows.map(toRecorded);
}

async function readStreams(
  sql: Sql,
  streams: readonly string[],
  opts: { atOrBefore?: Position },
): Promise<RecordedEvent[]> {
  if (streams.length === 0) return [];
  const at = opts.atOrBefore;
  // one statement for a batch of streams (a statement's payments), where reading them one by one made a
  // round trip per stream
  const rows = await guard(() =>
    sql.unsafe<EventRow[]>(
      `select ${COLUMNS} from es_events where stream_id = any($1::text[])
       ${at ? 'and (transaction_id, global_position) <= ($2::text::xid8, $3::int8)' : ''}
       order by stream_id, stream_revision`,
      at ? [streams as string[], at.commit.toString(), at.prepare.toString()] : [streams as string[]],
    ),
  );
  return rows.map(toRecorded);
}

/** The page after the last full page returned, being read already. */
interface ReadAhead {
  next: { key: string; page: Promise<RecordedEvent[]> } | undefined;
}

async function readAll(
  sql: Sql,
  ahead: ReadAhead,
  from: Position | undefined,
  limit: number,
): Promise<RecordedEvent[]> {
  const key = `${from ? formatPosition(from) : '-'}:${limit}`;
  let page: RecordedEvent[] | undefined;
  if (ahead.next?.key === key) {
    const pending = ahead.next.page;
    ahead.next = undefined;
    const read = await pending;
    // Only a full page read ahead is what a read now would return (see below); a shorter one may
    // be missing events committed since, so it is read again.
    if (read.length === limit) page = read;
  }
  page ??= await readPage(sql, from, limit);
  if (page.length === limit) {
    // A follower catching up asks for the next page at once: read it while the caller handles this one.
    // Every event below the snapshot's xmin is final, and any event committed later sorts after all of
    // them, so a full page read a little earlier is exactly the page a read now would return.
    const last = page[page.length - 1]!.position;
    ahead.next = { key: `${formatPosition(last)}:${limit}`, page: readPage(sql, last, limit).catch(() => []) };
  }
  return page;
}

async function headPosition(sql: Sql): Promise<Position | undefined> {
  const rows = await guard(async () => {
    const others = await otherDatabasesXids(sql);
    return sql.unsafe<{ transaction_id: string; global_position: bigint }[]>(
      `select e.transaction_id::text as transaction_id, e.global_position from es_events e
       where e.transaction_id < ${VISIBLE_BELOW('$1')}
       order by e.transaction_id desc, e.global_position desc limit 1`,
      [others],
    );
  });
  const r = rows[0];
  return r ? { commit: BigInt(r.transaction_id), prepare: r.global_position } : undefined;
}

async function readAt(sql: Sql, position: Position): Promise<RecordedEvent | undefined> {
  // an event at a position someone has read is final: no visibility bound needed
  const rows = await guard(() =>
    sql.unsafe<EventRow[]>(
      `select ${COLUMNS} from es_events where transaction_id = $1::text::xid8 and global_position = $2::int8`,
      [position.commit.toString(), position.prepare.toString()],
    ),
  );
  return rows[0] ? toRecorded(rows[0]) : undefined;
}

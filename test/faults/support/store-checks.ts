import type { Sql } from '../../../src/db/connect';
import { dataOf, isEvent } from '../../../src/events/catalog';
import { SyncWindowFailed, syncStream } from '../../../src/events/ingest-events';
import { createPostgresEventStore } from '../../../src/store/postgres';

/**
 * What a crash must never leave in the event store, read straight from its tables (es_events, es_streams),
 * and digests of the read models (every row of every view of schema `recon`).
 */

export interface StoreIntegrity {
  readonly events: number;
  /** event ids appearing more than once (the unique constraint should make this impossible) */
  readonly duplicateIds: string[];
  /** the same content (type, version, data) twice in one stream */
  readonly duplicateContent: Array<{ stream: string; contentHash: string; n: number }>;
  /** streams whose revisions are not exactly 0..n-1 */
  readonly revisionGaps: Array<{ stream: string; n: number; lo: string; hi: string }>;
  /** streams whose es_streams.revision is not the last event's revision */
  readonly streamHeadMismatches: Array<{ stream: string; head: string; last: string | null }>;
}

export async function storeIntegrity(sql: Sql): Promise<StoreIntegrity> {
  const [count] = await sql<{ n: number }[]>`select count(*)::int as n from es_events`;
  const duplicateIds = (
    await sql<{ id: string }[]>`select event_id::text as id from es_events group by event_id having count(*) > 1`
  ).map((r) => r.id);
  const duplicateContent = (
    await sql<{ stream: string; content_hash: string; n: number }[]>`
    select stream_id as stream, content_hash, count(*)::int as n from es_events group by stream_id, content_hash having count(*) > 1`
  ).map((r) => ({ stream: r.stream, contentHash: r.content_hash, n: r.n }));
  const revisionGaps = await sql<{ stream: string; n: number; lo: string; hi: string }[]>`
    select stream_id as stream, count(*)::int as n, min(stream_revision)::text as lo, max(stream_revision)::text as hi
    from es_events group by stream_id
    having min(stream_revision) <> 0 or max(stream_revision) <> count(*) - 1 or count(distinct stream_revision) <> count(*)`;
  const streamHeadMismatches = await sql<{ stream: string; head: string; last: string | null }[]>`
    select s.stream_id as stream, s.revision::text as head, max(e.stream_revision)::text as last
    from es_streams s left join es_events e using (stream_id)
    group by s.stream_id, s.revision having s.revision is distinct from coalesce(max(e.stream_revision), -1)`;
  return {
    events: count!.n,
    duplicateIds,
    duplicateContent,
    revisionGaps: [...revisionGaps],
    streamHeadMismatches: [...streamHeadMismatches],
  };
}

/** Event ids of the streams matching a LIKE pattern, sorted. */
export async function eventIds(sql: Sql, streamLike: string): Promise<string[]> {
  const rows = await sql<
    { id: string }[]
  >`select event_id::text as id from es_events where stream_id like ${streamLike} order by 1`;
  return rows.map((r) => r.id);
}

/** Ids of every observation and rejection a sync appended (payment and rejection streams), sorted. */
export async function observationIds(sql: Sql): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select event_id::text as id from es_events where stream_id like 'payment-%' or stream_id like 'rejections-%' order by 1`;
  return rows.map((r) => r.id);
}

/** The windows a sync of `posId` recorded as failed, with their reasons, in order. */
export async function failuresRecorded(
  sql: Sql,
  posId: string,
): Promise<{ window: { from: string; to: string }; reason: string }[]> {
  const events = await createPostgresEventStore(sql).readStream(syncStream(posId));
  return events
    .filter((e) => isEvent(SyncWindowFailed, e))
    .map((e) => {
      const d = dataOf(SyncWindowFailed, e);
      return { window: d.window, reason: d.reason };
    });
}

export async function countEvents(sql: Sql, streamLike = '%'): Promise<number> {
  const [r] = await sql<{ n: number }[]>`select count(*)::int as n from es_events where stream_id like ${streamLike}`;
  return r!.n;
}

export async function recordedTypes(sql: Sql, streamLike: string): Promise<Record<string, number>> {
  const rows = await sql<
    { type: string; n: number }[]
  >`select type, count(*)::int as n from es_events where stream_id like ${streamLike} group by type`;
  return Object.fromEntries(rows.map((r) => [r.type, r.n]));
}

/**
 * `rows:md5` of every view of schema `recon`, rows in a total order. `exclude` drops columns by name
 * (circumstance that legitimately differs between two databases: event-store positions, observation times);
 * `transform` replaces a column by an SQL expression over the view's row `t` (to drop part of a value).
 */
export async function viewDigests(
  sql: Sql,
  opts: { exclude?: readonly string[]; transform?: Readonly<Record<string, string>> } = {},
): Promise<Record<string, string>> {
  const exclude = new Set(opts.exclude ?? []);
  const views = await sql<{ table_name: string }[]>`
    select table_name from information_schema.views where table_schema = 'recon' order by table_name`;
  const out: Record<string, string> = {};
  for (const { table_name } of views) {
    const cols = await sql<{ column_name: string }[]>`
      select column_name from information_schema.columns where table_schema = 'recon' and table_name = ${table_name} order by ordinal_position`;
    const kept = cols.map((c) => c.column_name).filter((c) => !exclude.has(c));
    const list = kept.map((c) => opts.transform?.[c] ?? `t."${c}"`).join(', ');
    const [r] = await sql.unsafe<{ n: number; digest: string | null }[]>(
      `select count(*)::int as n, md5(coalesce(string_agg(x::text, E'\\n' order by x::text), '')) as digest
       from (select row(${list}) as x from recon."${table_name}" t) s`,
    );
    out[table_name] = `${r!.n}:${r!.digest}`;
  }
  return out;
}

/** The live builds' checkpoints and events applied, and the event store's head position. */
export async function projectionState(sql: Sql): Promise<{
  builds: Array<{ name: string; checkpoint: string | null; applied: number }>;
  head: string | null;
  events: number;
}> {
  const builds = await sql<{ name: string; checkpoint: string | null; applied: number }[]>`
    select name, checkpoint, events_applied::int as applied from projection_builds where status = 'live' order by name`;
  const [h] = await sql<{ head: string | null; n: number }[]>`
    select (select transaction_id::text || '/' || global_position::text from es_events order by transaction_id desc, global_position desc limit 1) as head,
           (select count(*)::int from es_events) as n`;
  return { builds: [...builds], head: h!.head, events: h!.n };
}

/** Events at or before a position (`commit/prepare`), in commit order. */
export async function eventsUpTo(sql: Sql, position: string): Promise<number> {
  const [commit, prepare] = position.split('/');
  const [r] = await sql<{ n: number }[]>`
    select count(*)::int as n from es_events
    where (transaction_id::text::numeric, global_position) <= (${commit!}::numeric, ${prepare!}::bigint)`;
  return r!.n;
}

/** `md5` per column of one view (to name the columns where two read models differ). */
export async function columnDigests(sql: Sql, view: string): Promise<Record<string, string>> {
  const cols = await sql<{ column_name: string }[]>`
    select column_name from information_schema.columns where table_schema = 'recon' and table_name = ${view} order by ordinal_position`;
  const out: Record<string, string> = {};
  for (const { column_name } of cols) {
    const [r] = await sql.unsafe<{ d: string | null }[]>(
      `select md5(coalesce(string_agg(coalesce(t."${column_name}"::text, '∅'), E'\\n' order by t."${column_name}"::text), '')) as d from recon."${view}" t`,
    );
    out[column_name] = r!.d ?? '';
  }
  return out;
}

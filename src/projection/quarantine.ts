import type { Sql } from '../db/connect';
import { formatPosition, parsePosition, type RecordedEvent } from '../store/types';
import { buildsOf } from './builds';
import { lockBlocking } from './locks';
import type { Tx } from './projection';
import type { RunnerDeps } from './runner-types';
import { selectProjections } from './load';
import { contextFor } from './settings';
import { failsWhateverTheEvent } from './set-aside';

/**
 * The events a projection build set aside (table projection_quarantine, migration 2200; view
 * recon.quarantined_events): recorded in the transaction that moves the build's checkpoint past them,
 * listed for `recon quarantine list`, `/readyz` and the nightly report, and applied again by
 * `recon quarantine retry` once the code or the data is fixed.
 */

export interface QuarantinedEvent {
  readonly projection: string;
  readonly build: string;
  readonly position: string;
  readonly stream: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly error: string;
  readonly firstTriedAt: Date;
  readonly lastTriedAt: Date;
  readonly attempts: number;
  readonly status: 'quarantined' | 'retried';
}

/** An error's text as stored: its message (and SQLSTATE), one line, bounded. */
export function errorText(e: unknown): string {
  const code = e && typeof e === 'object' && 'code' in e ? String((e as { code: unknown }).code) : '';
  const message = e instanceof Error ? e.message : String(e);
  const text = (code && !message.includes(code) ? `${message} (${code})` : message).replace(/\s+/g, ' ').trim();
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

/** Records that the build set the event aside; the same event again counts one more attempt. */
export async function recordQuarantine(
  tx: Tx,
  build: { schema_name: string; name: string },
  event: RecordedEvent,
  error: unknown,
): Promise<void> {
  await tx`
    insert into projection_quarantine (schema_name, event_id, name, position, commit_pos, prepare_pos, stream, event_type, error)
    values (${build.schema_name}, ${event.id}::uuid, ${build.name}, ${formatPosition(event.position)},
      ${event.position.commit.toString()}::numeric, ${event.position.prepare.toString()}::numeric, ${event.stream},
      ${event.type}, ${errorText(error)})
    on conflict (schema_name, event_id) do update set attempts = projection_quarantine.attempts + 1,
      last_tried_at = now(), error = excluded.error, status = 'quarantined', retried_at = null`;
}

interface Row {
  projection: string;
  build: string;
  position: string;
  stream: string;
  event_id: string;
  event_type: string;
  error: string;
  first_tried_at: Date;
  last_tried_at: Date;
  attempts: number;
  status: 'quarantined' | 'retried';
}

const toEvent = (r: Row): QuarantinedEvent => ({
  projection: r.projection,
  build: r.build,
  position: r.position,
  stream: r.stream,
  eventId: r.event_id,
  eventType: r.event_type,
  error: r.error,
  firstTriedAt: r.first_tried_at,
  lastTriedAt: r.last_tried_at,
  attempts: r.attempts,
  status: r.status,
});

/** The set-aside events of the builds in use (building or live), in the log's order. */
export async function listQuarantine(
  sql: Sql | Tx,
  opts: { projection?: string; eventId?: string; all?: boolean } = {},
): Promise<QuarantinedEvent[]> {
  const rows = await sql<Row[]>`
    select q.name as projection, q.schema_name as build, q.position, q.stream, q.event_id::text as event_id,
      q.event_type, q.error, q.first_tried_at, q.last_tried_at, q.attempts, q.status
    from projection_quarantine q join projection_builds b on b.schema_name = q.schema_name
    where b.status in ('building', 'live')
      and (${opts.all === true} or q.status = 'quarantined')
      and (${opts.projection ?? null}::text is null or q.name = ${opts.projection ?? null}::text)
      and (${opts.eventId ?? null}::uuid is null or q.event_id = ${opts.eventId ?? null}::uuid)
    order by q.name, q.schema_name, q.commit_pos, q.prepare_pos`;
  return rows.map(toEvent);
}

export interface QuarantineSummary {
  /** events set aside and not yet applied, over every build in use */
  readonly open: number;
  readonly projections: ReadonlyArray<{
    readonly projection: string;
    readonly open: number;
    readonly oldest: Date;
    /** the first few, in the log's order */
    readonly events: ReadonlyArray<Pick<QuarantinedEvent, 'eventId' | 'eventType' | 'position' | 'stream' | 'error'>>;
  }>;
}

/**
 * What the nightly report shows of the quarantine (a hook: the report calls it): how many events are set
 * aside per projection, since when, and the first five of each with their error.
 */
export async function quarantineSummary(sql: Sql): Promise<QuarantineSummary> {
  const open = await listQuarantine(sql);
  const byName = new Map<string, QuarantinedEvent[]>();
  for (const q of open) byName.set(q.projection, [...(byName.get(q.projection) ?? []), q]);
  return {
    open: open.length,
    projections: [...byName].map(([projection, qs]) => ({
      projection,
      open: qs.length,
      oldest: new Date(Math.min(...qs.map((q) => q.firstTriedAt.getTime()))),
      events: qs.slice(0, 5).map((q) => ({
        eventId: q.eventId,
        eventType: q.eventType,
        position: q.position,
        stream: q.stream,
        error: q.error,
      })),
    })),
  };
}

export interface RetryResult {
  readonly retried: readonly QuarantinedEvent[];
  /** still cannot be applied: left quarantined, one more attempt and the new error recorded */
  readonly failed: readonly QuarantinedEvent[];
}

/**
 * Applies the set-aside events again, in the log's order, to the build that set them aside (its current
 * state: the events after them are already applied), each in a savepoint of one transaction per build that
 * holds the projection's lock (a runner waits meanwhile). Applied ones are marked `retried`; one that still
 * fails stays quarantined with its new error. A projection whose rows depend on the order of events (the
 * judging clock of reconciliation and orders) may differ from a replay in those rows: `recon project
 * --rebuild NAME` replays in order (docs/reliability.md).
 */
export async function retryQuarantined(
  deps: RunnerDeps,
  opts: { projection?: string; eventId?: string } = {},
): Promise<RetryResult> {
  const open = await listQuarantine(deps.sql, opts);
  const retried: QuarantinedEvent[] = [];
  const failed: QuarantinedEvent[] = [];
  const projections = await selectProjections(deps, [...new Set(open.map((q) => q.projection))]);
  for (const p of projections) {
    await deps.sql.begin(async (tx) => {
      await lockBlocking(tx, p.name);
      for (const build of await buildsOf(tx, p.name)) {
        const ctx = contextFor(deps, build);
        const mine = await listQuarantine(tx, { ...opts, projection: p.name });
        for (const q of mine.filter((m) => m.build === build.schema_name)) {
          const event = await deps.store.readAt(parsePosition(q.position));
          if (!event || event.id.toLowerCase() !== q.eventId.toLowerCase()) {
            failed.push({ ...q, error: `the event store holds no event ${q.eventId} at ${q.position}` });
            continue;
          }
          try {
            await tx.savepoint((sp) => p.apply(sp as Tx, [event], ctx));
          } catch (e) {
            if (failsWhateverTheEvent(e)) throw e;
            await recordQuarantine(tx, build, event, e);
            failed.push({ ...q, error: errorText(e), attempts: q.attempts + 1 });
            continue;
          }
          await tx`update projection_quarantine set status = 'retried', retried_at = now(), last_tried_at = now(),
            attempts = attempts + 1 where schema_name = ${build.schema_name} and event_id = ${q.eventId}::uuid`;
          retried.push({ ...q, status: 'retried', attempts: q.attempts + 1 });
          deps.log.info('quarantined event applied', {
            projection: p.name,
            schema: build.schema_name,
            event: q.eventId,
            position: q.position,
          });
        }
      }
    });
  }
  return { retried, failed };
}

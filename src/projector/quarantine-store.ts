import type { Sql } from '../db/connect';
import { formatPosition, type RecordedEvent } from '../store/types';
import type { Tx } from './projection';

/**
 * The table of set-aside events (projection_quarantine, migration 2200): written in the transaction that
 * moves a build's checkpoint past them (checkpoints.ts), read by `recon quarantine`, `/readyz` and the
 * nightly report (quarantine.ts).
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

/** The events set aside by the builds in use (building or live), in the log's order; `all`: every row ever, retired builds' too. */
export async function listQuarantine(
  sql: Sql | Tx,
  opts: { projection?: string; eventId?: string; all?: boolean } = {},
): Promise<QuarantinedEvent[]> {
  const rows = await sql<Row[]>`
    select q.name as projection, q.schema_name as build, q.position, q.stream, q.event_id::text as event_id,
      q.event_type, q.error, q.first_tried_at, q.last_tried_at, q.attempts, q.status
    from projection_quarantine q join projection_builds b on b.schema_name = q.schema_name
    where (${opts.all === true} or (b.status in ('building', 'live') and q.status = 'quarantined'))
      and (${opts.projection ?? null}::text is null or q.name = ${opts.projection ?? null}::text)
      and (${opts.eventId ?? null}::uuid is null or q.event_id = ${opts.eventId ?? null}::uuid)
    order by q.name, q.schema_name, q.commit_pos, q.prepare_pos`;
  return rows.map(toEvent);
}

export async function markRetried(sql: Sql | Tx, schema: string, eventId: string): Promise<void> {
  await sql`update projection_quarantine set status = 'retried', retried_at = now(), last_tried_at = now(),
    attempts = attempts + 1 where schema_name = ${schema} and event_id = ${eventId}::uuid and status = 'quarantined'`;
}

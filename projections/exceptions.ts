import { ident, qualified } from '../src/db/identifier';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../src/events/audit-events';
import { EXCEPTION_EVENTS } from '../src/events/exception-events';
import { type Cell, copyRows } from '../src/projector/copy-rows';
import { eventTypes } from '../src/projector/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import type { RecordedEvent } from '../src/store/types';
import { evolveWork, type ExceptionWork, newWork, type Proposal } from '../src/exceptions/state';

/**
 * The work on exceptions (docs/exceptions.md): one row per exception that anyone worked on or decided, and
 * its history in the log's order (who, what, when, why). Folded by src/exceptions/state.ts from the
 * exception's stream and the discrepancy's decisions; the state shown (accepted, reopened by the sources,
 * resolved) is combined with the legs' discrepancies when read (src/exceptions/queries.ts), so it follows
 * the sources without a write here.
 */

const HANDLES = eventTypes(EXCEPTION_EVENTS, [DiscrepancyAccepted, DiscrepancyAcceptanceRevoked]);

const WORK_COLUMNS = [
  'discrepancy_id',
  'work_state',
  'assignee',
  'due_at',
  'pending',
  'evidence',
  'reason_code',
  'acceptance',
  'decision',
  'last_action',
  'last_by',
  'last_at',
  'revision',
  'decision_revision',
];

const HISTORY_COLUMNS = [
  'event_id',
  'discrepancy_id',
  'action',
  'by_user',
  'at',
  'why',
  'detail',
  'commit_pos',
  'prepare_pos',
];

async function setup(tx: Tx, ctx: ProjectionContext): Promise<void> {
  const s = tx(ctx.schema);
  await tx`
    create table ${s}.exceptions (
      discrepancy_id uuid primary key,
      work_state text not null,
      assignee text,
      due_at timestamptz,
      pending jsonb,
      evidence uuid,
      reason_code text,
      acceptance uuid,
      decision text,
      last_action text,
      last_by text,
      last_at timestamptz,
      revision int not null,
      decision_revision int not null
    );
    create index on ${s}.exceptions (assignee);
    create table ${s}.history (
      event_id uuid primary key,
      discrepancy_id uuid not null,
      action text not null,
      by_user text not null,
      at timestamptz not null,
      why text,
      detail jsonb not null,
      commit_pos numeric(20,0) not null,
      prepare_pos numeric(20,0) not null
    );
    create index on ${s}.history (discrepancy_id, commit_pos, prepare_pos);
  `.simple();
}

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

function workOfRow(r: Record<string, unknown>): ExceptionWork {
  return {
    discrepancyId: String(r.discrepancy_id),
    work: r.work_state as ExceptionWork['work'],
    assignee: (r.assignee as string | null) ?? null,
    dueAt: iso(r.due_at),
    pending: (r.pending as Proposal | null) ?? null,
    evidence: (r.evidence as string | null) ?? null,
    reasonCode: (r.reason_code as string | null) ?? null,
    acceptance: (r.acceptance as string | null) ?? null,
    decision: (r.decision as ExceptionWork['decision']) ?? null,
    lastAction: (r.last_action as string | null) ?? null,
    lastBy: (r.last_by as string | null) ?? null,
    lastAt: iso(r.last_at),
    revision: Number(r.revision),
    decisionRevision: Number(r.decision_revision),
  };
}

const cellsOf = (w: ExceptionWork): Cell[] => [
  w.discrepancyId,
  w.work,
  w.assignee,
  w.dueAt,
  w.pending as unknown as Record<string, unknown> | null,
  w.evidence,
  w.reasonCode,
  w.acceptance,
  w.decision,
  w.lastAction,
  w.lastBy,
  w.lastAt,
  w.revision,
  w.decisionRevision,
];

const discrepancyOf = (e: RecordedEvent): string | null => {
  const id = (e.data as { discrepancyId?: unknown } | null)?.discrepancyId;
  return typeof id === 'string' ? id : null;
};

async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  const ids = [...new Set(events.map(discrepancyOf).filter((x): x is string => x !== null))];
  if (ids.length === 0) return;
  const table = tx(ctx.schema);
  const rows = await tx<Record<string, unknown>[]>`
    select * from ${table}.exceptions where discrepancy_id = any(${ids}::uuid[])`;
  const works = new Map(rows.map((r) => [String(r.discrepancy_id), workOfRow(r)]));
  const history: Cell[][] = [];
  for (const e of events) {
    const id = discrepancyOf(e);
    if (id === null) continue;
    const w = works.get(id) ?? newWork(id);
    const entry = evolveWork(w, e);
    if (entry === null) continue;
    works.set(id, w);
    history.push([
      entry.eventId,
      id,
      entry.action,
      entry.by,
      entry.at,
      entry.why,
      entry.detail,
      e.position.commit,
      e.position.prepare,
    ]);
  }
  await tx`delete from ${table}.exceptions where discrepancy_id = any(${[...works.keys()]}::uuid[])`;
  await copyRows(tx, qualified(ctx.schema, 'exceptions'), WORK_COLUMNS, [...works.values()].map(cellsOf));
  await copyRows(tx, qualified(ctx.schema, 'history'), HISTORY_COLUMNS, history);
}

export const projection: Projection = {
  name: 'exceptions',
  version: 3,
  // an exception's state is folded in the order of its events: one set aside is applied again by a replay
  retryByReplay: true,
  handles: HANDLES,
  setup,
  apply,
  views(ctx: ProjectionContext) {
    const s = ident(ctx.schema);
    return [
      `create or replace view recon.exceptions as
         select discrepancy_id, work_state, assignee, due_at, pending, evidence, reason_code, acceptance, decision,
                last_action, last_by, last_at, revision, decision_revision
         from ${s}.exceptions`,
      `create or replace view recon.exception_history as
         select event_id, discrepancy_id, action, by_user, at, why, detail,
                commit_pos::text || '/' || prepare_pos::text as position_text, commit_pos, prepare_pos
         from ${s}.history`,
    ];
  },
};

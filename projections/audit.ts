import { AUDITED_EVENTS, entryOf, GENESIS, isAudited } from '../src/audit/chain';
import { ident, qualified } from '../src/db/identifier';
import { type Cell, copyRows } from '../src/projector/copy-rows';
import { eventTypes } from '../src/projector/handlers';
import type { Projection, ProjectionContext, Tx } from '../src/projector/projection';
import type { RecordedEvent } from '../src/store/types';

/**
 * The audit journal (docs/audit.md): one row per people's action (decisions, approvals, rejections, comments,
 * assignments, payout runs, users) in the log's order, with the SHA-256 of the event's canonical content and
 * a hash chain over them, after Formance's ledger: chain = sha256(previous chain || this hash). `recon audit
 * verify` reads the events again and recomputes it. It handles no PSP or bank event, so a month's catch-up
 * hands it only the few batches holding a person's action.
 */

const COLUMNS = [
  'seq',
  'commit_pos',
  'prepare_pos',
  'event_id',
  'type',
  'stream',
  'actor',
  'at',
  'event_hash',
  'chain',
];

async function setup(tx: Tx, ctx: ProjectionContext): Promise<void> {
  const s = tx(ctx.schema);
  await tx`
    create table ${s}.audit_journal (
      seq bigint primary key,
      commit_pos numeric(20,0) not null,
      prepare_pos numeric(20,0) not null,
      event_id text not null,
      type text not null,
      stream text not null,
      actor text,
      at timestamptz not null,
      event_hash text not null,
      chain text not null,
      unique (commit_pos, prepare_pos)
    );
  `.simple();
}

/** Each entry chains on the last one written (a batch, or the one before it): the rows do not depend on batch sizes. */
async function apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void> {
  const actions = events.filter(isAudited);
  if (actions.length === 0) return;
  const table = tx(ctx.schema);
  const [last] = await tx<{ seq: bigint; chain: string }[]>`
    select seq, chain from ${table}.audit_journal order by seq desc limit 1`;
  let seq = last ? BigInt(last.seq) : 0n;
  let chain = last?.chain ?? GENESIS;
  const rows: Cell[][] = [];
  for (const e of actions) {
    const entry = entryOf(e, ++seq, chain);
    chain = entry.chain;
    rows.push([
      entry.seq,
      entry.commit,
      entry.prepare,
      entry.eventId,
      entry.type,
      entry.stream,
      entry.actor,
      entry.at,
      entry.eventHash,
      entry.chain,
    ]);
  }
  await copyRows(tx, qualified(ctx.schema, 'audit_journal'), COLUMNS, rows);
}

export const projection: Projection = {
  name: 'audit',
  version: 1,
  // a chain is in the log's order: an event set aside is applied again by a replay from zero, never in place
  retryByReplay: true,
  handles: eventTypes(AUDITED_EVENTS),
  setup,
  apply,
  views(ctx: ProjectionContext) {
    const s = ident(ctx.schema);
    return [
      `create or replace view recon.audit_journal as
         select seq, commit_pos::text || '/' || prepare_pos::text as position_text, commit_pos, prepare_pos,
                event_id, type, stream, actor, at, event_hash, chain
         from ${s}.audit_journal`,
    ];
  },
};

import type { Sql } from '../db/sql';
import { ReconError } from '../errors';
import {
  comparePositions,
  formatPosition,
  parsePosition,
  type EventStore,
  type Position,
  type RecordedEvent,
} from '../store/types';
import { eventHash, GENESIS, isAudited, nextChain } from './chain';

/**
 * `recon audit verify` (docs/audit.md): reads the people's actions from the event store again, recomputes
 * their hashes and the chain, and compares them with the audit journal (projections/audit.ts) up to its
 * checkpoint, entry by entry, stopping at the first place where they part.
 */

/** There is no live audit journal yet: nothing to compare the store with. */
export class AuditJournalNotBuilt extends ReconError {
  readonly code = 'AUDIT_JOURNAL_NOT_BUILT';
  readonly kind = 'configuration';
  constructor() {
    super('the audit journal is not built yet: run recon project first (docs/audit.md)');
    this.name = 'AuditJournalNotBuilt';
  }
}

export type ProblemKind = 'altered' | 'removed' | 'inserted' | 'journal_altered';

export interface Problem {
  readonly kind: ProblemKind;
  /** the position in the log ("commit/prepare") where store and journal part */
  readonly position: string;
  /** the journal's entry there (the one the store lacks or holds otherwise), or the place an inserted one takes */
  readonly seq: bigint;
  readonly eventId: string;
  readonly type: string;
  readonly detail: string;
}

export interface Verification {
  /** entries checked and found equal, in order */
  readonly entries: bigint;
  /** the chain after them (GENESIS when none): the head hash an auditor writes down */
  readonly head: string;
  /** the journal's checkpoint: the events up to it are journaled */
  readonly checkpoint: string | null;
  /** people's actions in the store after the checkpoint, not journaled yet */
  readonly pending: number;
  readonly problem: Problem | undefined;
  /** where the head an auditor noted is in the chain (undefined when none was given, null when not found) */
  readonly expected: { readonly seq: bigint; readonly position: string } | null | undefined;
}

interface Row {
  seq: bigint;
  commit_pos: string;
  prepare_pos: string;
  event_id: string;
  type: string;
  event_hash: string;
  chain: string;
}

const PAGE = 5000;

/** The live journal's rows up to its checkpoint, in order, a page at a time. */
async function* journalRows(sql: Sql, schema: string, upTo: Position): AsyncGenerator<Row> {
  let after = 0n;
  for (;;) {
    const page = await sql<Row[]>`
      select seq, commit_pos::text as commit_pos, prepare_pos::text as prepare_pos, event_id, type, event_hash, chain
      from ${sql(schema)}.audit_journal
      where seq > ${after.toString()}::int8
        and (commit_pos, prepare_pos) <= (${upTo.commit.toString()}::numeric, ${upTo.prepare.toString()}::numeric)
      order by seq limit ${PAGE}`;
    for (const r of page) yield { ...r, seq: BigInt(r.seq) };
    if (page.length < PAGE) return;
    after = BigInt(page[page.length - 1]!.seq);
  }
}

/** The store's people's actions from the start, in the log's order. */
async function* storeActions(store: EventStore, signal?: AbortSignal): AsyncGenerator<RecordedEvent> {
  let from: Position | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const page = await store.readAll(from, { maxCount: PAGE });
    for (const e of page) if (isAudited(e)) yield e;
    if (page.length < PAGE) return;
    from = page[page.length - 1]!.position;
  }
}

const rowPosition = (r: Row): Position => ({ commit: BigInt(r.commit_pos), prepare: BigInt(r.prepare_pos) });

/** Where the store's next action and the journal's next entry part, or undefined while they agree. */
function compare(e: RecordedEvent | undefined, r: Row | undefined, seq: bigint, previous: string): Problem | undefined {
  if (r === undefined && e === undefined) return undefined;
  const where = (p: Position) => formatPosition(p);
  const c = e === undefined ? 1 : r === undefined ? -1 : comparePositions(e.position, rowPosition(r));
  if (c > 0) {
    const it = r!;
    return {
      kind: 'removed',
      position: where(rowPosition(it)),
      seq: it.seq,
      eventId: it.event_id,
      type: it.type,
      detail: 'the event journaled here is no longer in the event store (removed, or no longer a people’s action)',
    };
  }
  if (c < 0) {
    const it = e!;
    return {
      kind: 'inserted',
      position: where(it.position),
      seq,
      eventId: it.id,
      type: it.type,
      detail: 'this event is in the event store but was never journaled (inserted afterwards)',
    };
  }
  const [ev, row] = [e!, r!];
  const hash = eventHash(ev);
  // a row that does not follow from the one before it was written by hand, not by the projection
  const rowConsistent = row.seq === seq && row.chain === nextChain(previous, row.event_hash);
  if (ev.id.toLowerCase() === row.event_id && hash === row.event_hash && rowConsistent) return undefined;
  const at = { position: where(ev.position), seq: row.seq, eventId: row.event_id, type: row.type };
  if (!rowConsistent) return { kind: 'journal_altered', ...at, detail: 'the journal’s entry was changed by hand' };
  const other = ev.id.toLowerCase() === row.event_id ? '' : ` (another event, ${ev.id} ${ev.type}, is there now)`;
  return {
    kind: 'altered',
    ...at,
    detail: `the event's content differs from what was journaled: altered after it was journaled${other}`,
  };
}

/**
 * Compares the store with the journal. `expectHead`: a head an auditor noted earlier; found when the chain
 * recomputed from the store passes through it (the journal has grown since, never rewritten before it).
 */
export async function verifyJournal(
  deps: { readonly sql: Sql; readonly store: EventStore; readonly signal?: AbortSignal },
  opts: { readonly expectHead?: string } = {},
): Promise<Verification> {
  const [build] = await deps.sql<{ schema_name: string; checkpoint: string | null }[]>`
    select schema_name, checkpoint from projection_builds where name = 'audit' and status = 'live'`;
  if (!build) throw new AuditJournalNotBuilt();
  const upTo = build.checkpoint ? parsePosition(build.checkpoint) : undefined;
  const rows = upTo ? journalRows(deps.sql, build.schema_name, upTo) : (async function* () {})();
  const events = storeActions(deps.store, deps.signal);
  const expectHead = opts.expectHead?.toLowerCase();
  let expected: Verification['expected'] = expectHead === undefined ? undefined : null;
  let head = GENESIS;
  let entries = 0n;
  let pending = 0;
  let row = await next(rows);
  let problem: Problem | undefined;
  for (let e = await next(events); ; e = await next(events)) {
    if (e !== undefined && (upTo === undefined || comparePositions(e.position, upTo) > 0)) {
      pending++;
      continue;
    }
    // after the first problem the rest of the log is read only to count what is not journaled yet
    if (problem !== undefined) {
      if (e === undefined) break;
      continue;
    }
    problem = compare(e, row, entries + 1n, head);
    if (problem !== undefined) {
      if (e === undefined) break;
      continue;
    }
    if (e === undefined) break;
    head = row!.chain;
    entries++;
    if (head === expectHead) expected = { seq: entries, position: formatPosition(e.position) };
    row = await next(rows);
  }
  return { entries, head, checkpoint: build.checkpoint, pending, problem, expected };
}

async function next<T>(it: AsyncGenerator<T>): Promise<T | undefined> {
  const r = await it.next();
  return r.done ? undefined : r.value;
}

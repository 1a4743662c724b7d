import { isConnectionError, sqlStateOf } from '../db/errors';
import type { RecordedEvent } from '../store/types';
import type { Projection, ProjectionContext, Tx } from './projection';

/**
 * When a batch cannot be applied: find the events that cannot be applied and set them aside, so that the
 * projection goes on with the others (docs/reliability.md, "Quarantine").
 *
 * The batch's transaction has rolled back. A second one applies the batch append by append, each in a
 * savepoint (the runner never splits an append, and a projection's rows are the same whatever the batch
 * boundaries, so this equals one batch). An append that fails is searched for its first event that cannot
 * be applied: the shortest failing prefix, by bisection, each try in a savepoint rolled back. That event is
 * set aside and the append applied again without it, until it applies. Only the poisoned events are left
 * out, the rest of their append is applied as one append, and which events are set aside depends on the
 * events alone, not on where the batches end: a replay from zero sets aside the same ones.
 *
 * Not every failure is the events' fault: a lost connection, a cancelled statement (shutdown), a deadlock or
 * a serialization failure would fail on any event; those fail the batch as before (tried again later).
 */

/** More set aside in one batch than this is taken for a defect that concerns every event: the batch fails. */
export const MAX_SET_ASIDE_PER_BATCH = 100;

export interface SetAside {
  readonly event: RecordedEvent;
  readonly error: unknown;
}

/** Failures that are not the events': connection, cancellation, resources, concurrency. */
export function failsWhateverTheEvent(e: unknown): boolean {
  if (isConnectionError(e)) return true;
  const code = sqlStateOf(e);
  if (code === undefined) return false;
  // 40: transaction rollback (serialization, deadlock); 53: resources; 57: operator intervention
  // (cancelled statement, shutdown); 55P03: lock not available; 25P02: already in a failed transaction
  return /^(40|53|57)/.test(code) || code === '55P03' || code === '25P02';
}

const ROLLBACK = Symbol('roll back the try');

/** Applies `events` in a savepoint; the error when they cannot be applied, undefined when they were. */
async function tryApply(
  tx: Tx,
  p: Projection,
  events: readonly RecordedEvent[],
  ctx: ProjectionContext,
  keep: boolean,
): Promise<unknown> {
  try {
    await tx.savepoint(async (sp) => {
      await p.apply(sp as Tx, events, ctx);
      if (!keep) throw ROLLBACK;
    });
    return undefined;
  } catch (e) {
    if (e === ROLLBACK) return undefined;
    if (failsWhateverTheEvent(e)) throw e;
    return e ?? new Error('apply failed without an error');
  }
}

/** The index of the first event whose prefix fails (the whole `events` fail with `error`), and its error. */
async function firstFailing(
  tx: Tx,
  p: Projection,
  events: readonly RecordedEvent[],
  ctx: ProjectionContext,
  error: unknown,
): Promise<{ index: number; error: unknown }> {
  let lo = 1;
  let hi = events.length;
  let found = error;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const e = await tryApply(tx, p, events.slice(0, mid), ctx, false);
    if (e === undefined) lo = mid + 1;
    else {
      hi = mid;
      found = e;
    }
  }
  return { index: hi - 1, error: found };
}

/** The appends of a batch, in order (consecutive events sharing appendId). */
function appendsOf(events: readonly RecordedEvent[]): RecordedEvent[][] {
  const out: RecordedEvent[][] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (last && last[0]!.appendId === e.appendId) last.push(e);
    else out.push([e]);
  }
  return out;
}

/** Applies the batch append by append inside `tx`, setting aside the events that cannot be applied. */
export async function applySettingAside(
  tx: Tx,
  p: Projection,
  events: readonly RecordedEvent[],
  ctx: ProjectionContext,
  batchError: unknown,
): Promise<SetAside[]> {
  const aside: SetAside[] = [];
  for (const append of appendsOf(events)) {
    let rest = append;
    let error = await tryApply(tx, p, rest, ctx, true);
    while (error !== undefined) {
      const found = await firstFailing(tx, p, rest, ctx, error);
      aside.push({ event: rest[found.index]!, error: found.error });
      if (aside.length > MAX_SET_ASIDE_PER_BATCH) throw batchError;
      rest = rest.filter((_, i) => i !== found.index);
      error = rest.length ? await tryApply(tx, p, rest, ctx, true) : undefined;
    }
  }
  return aside;
}

import { newEvent } from '../events/catalog';
import { idFromCanonical } from '../events/ids';
import { stableStringify } from '../canonical';
import {
  PeriodRecordObserved,
  RegisterRecordObserved,
  type NormalizedPeriodRecord,
  type NormalizedRegisterRecord,
} from '../events/ingest-events';
import { periodRowGroup, registerRowKey, samePeriodRow } from '../events/register-row';
import { isStoreError } from '../store/errors';
import type { AppendRequest, AppendResult, EventStore, NewEvent, RecordedEvent } from '../store/types';

/**
 * Appends a batch of observations, then observes again the rows that went back to an earlier content.
 *
 * An observation's id is its content's, so a row seen success → pending → success is read the third time as
 * a duplicate of the first and nothing is appended: the pending observation would stay the row's latest. So
 * after the batch, each payment stream where some observation was a duplicate is read back, and each
 * record of the batch is compared with the latest observation of its row (same source; a register row by
 * `registerRowKey`, a period record as the reconciliation recognises it, `samePeriodRow`). When that latest
 * observation's run did not see this content, the record is appended again with `supersedes: <id of that
 * latest observation>`: new content, so a new id, and the next run finds it as the latest and appends
 * nothing.
 *
 * "That run did not see this content" rather than "the latest observation differs": a register report may
 * list one row twice with different values (the `duplicate` discrepancy), both kept with the report's id.
 * Comparing each with the single latest observation would append one of them again on every re-run. The
 * observations of one run are those with the same metadata (source, reportId, window, observedAt: a
 * report id is the PSP's, unique per report; observedAt is taken once per window and run).
 *
 * The batch is replayed in its order over the stream as it stood before the append, so that a row's
 * records keep the report's order: a new version of a row that the batch had after a re-observed one (and
 * that the store therefore holds before the re-observation) is observed again after it too. A resumed run
 * that finds the first of two differing rows already stored and appends the second appends nothing more.
 *
 * Cost: none when nothing was a duplicate (a first sync). Otherwise one `readStream` per stream with a
 * duplicate, at most `READ_CONCURRENCY` at once, only the batch's streams in memory; re-observations
 * are rare and appended per stream with the revision read as the expected one (read again if it moved).
 */

/** Streams read back at once, per batch. */
export const READ_CONCURRENCY = 8;
/** Reads of one stream when other appends keep moving it between the read and the append. */
const ATTEMPTS = 5;

type Source = 'register' | 'period';
type Record_ = NormalizedRegisterRecord | NormalizedPeriodRecord;

interface Observed {
  /** the event's id */
  readonly id: string;
  /** the id of its content without `supersedes` (the event's id when it has none) */
  readonly base: string;
  readonly source: Source;
  /** register row key, or the period record's (pos, payment, method) */
  readonly group: string;
  readonly record: Record_;
  /** the run that observed it (see the module comment) */
  readonly run: string;
  /** a re-observation planned here, not yet in the store */
  readonly planned?: true;
}

type EventLike = Pick<NewEvent, 'id' | 'type' | 'version' | 'data' | 'metadata'>;
type ObservationData = { posId: string; raw: string; record: Record_; supersedes?: string };

function runOf(meta: Readonly<Record<string, unknown>> | undefined): string {
  const m = meta ?? {};
  const w = (m.window ?? {}) as { from?: unknown; to?: unknown };
  return JSON.stringify([m.source ?? null, m.reportId ?? null, w.from ?? null, w.to ?? null, m.observedAt ?? null]);
}

function sourceOf(e: Pick<EventLike, 'type' | 'version'>): Source | null {
  if (e.type === RegisterRecordObserved.type && e.version === RegisterRecordObserved.version) return 'register';
  if (e.type === PeriodRecordObserved.type && e.version === PeriodRecordObserved.version) return 'period';
  return null;
}

function observed(e: EventLike): Observed | null {
  const source = sourceOf(e);
  if (source === null) return null;
  const d = e.data as ObservationData;
  const base =
    d.supersedes === undefined
      ? e.id
      : idFromCanonical(
          `${e.type}.v${e.version}`,
          stableStringify({ posId: d.posId, raw: d.raw, record: d.record }, true),
        );
  const group =
    source === 'register'
      ? `r|${registerRowKey(d.posId, d.record as NormalizedRegisterRecord)}`
      : `p|${periodRowGroup(d.posId, d.record)}`;
  return { id: e.id, base, source, group, record: d.record, run: runOf(e.metadata) };
}

const sameRow = (a: Observed, b: Observed): boolean =>
  a.source === 'register' || samePeriodRow(a.record as NormalizedPeriodRecord, b.record as NormalizedPeriodRecord);

/** The same data with `supersedes`, validated (so its id covers `supersedes`), and this run's metadata. */
function reobservation(e: EventLike, supersedes: string): NewEvent {
  const { posId, raw, record } = e.data as ObservationData;
  const metadata = { ...e.metadata };
  return sourceOf(e) === 'register'
    ? newEvent(
        RegisterRecordObserved,
        { posId, raw, record: record as NormalizedRegisterRecord, supersedes },
        { metadata },
      )
    : newEvent(
        PeriodRecordObserved,
        { posId, raw, record: record as NormalizedPeriodRecord, supersedes },
        { metadata },
      );
}

/**
 * The re-observations one stream needs after a batch was appended to it. `stored`: the stream read after
 * the append; `ours`: the revisions the batch's new events took (from, to]; `batch`: the batch's events for
 * this stream, in order.
 */
export function planReobservations(
  stored: readonly RecordedEvent[],
  ours: { readonly from: number; readonly to: number },
  batch: readonly NewEvent[],
): NewEvent[] {
  const groups = new Map<string, Observed[]>();
  const add = (o: Observed) => {
    const g = groups.get(o.group);
    if (g) g.push(o);
    else groups.set(o.group, [o]);
  };
  const fresh = new Set<string>();
  for (const e of stored) {
    if (e.revision > ours.from && e.revision <= ours.to) {
      fresh.add(e.id);
      continue;
    }
    const o = observed(e);
    if (o) add(o);
  }
  const out: NewEvent[] = [];
  const done = new Set<string>();
  for (const e of batch) {
    if (done.has(e.id)) continue;
    done.add(e.id);
    const o = observed(e);
    if (!o) continue;
    const row = (groups.get(o.group) ?? []).filter((x) => sameRow(x, o));
    const latest = row.at(-1);
    if (fresh.has(e.id)) {
      // New: in the store where the batch had it, unless a re-observation of its row comes before it here.
      if (!latest?.planned) {
        add(o);
        continue;
      }
    } else if (!latest || row.some((x) => x.run === latest.run && x.base === o.base)) {
      // The run of the row's latest observation saw this content (or the row is unknown here: not ours).
      continue;
    }
    const again = reobservation(e, latest!.id);
    out.push(again);
    add({ ...o, id: again.id, planned: true });
  }
  return out;
}

async function reobserveStream(
  store: EventStore,
  request: AppendRequest,
  result: AppendResult,
): Promise<AppendResult | undefined> {
  const ours = { from: result.revision - result.appended, to: result.revision };
  for (let attempt = 1; ; attempt++) {
    const stored = await store.readStream(request.stream);
    const events = planReobservations(stored, ours, request.events);
    if (events.length === 0) return undefined;
    try {
      return await store.append(request.stream, events, { expectedRevision: stored.at(-1)?.revision ?? 'no_stream' });
    } catch (e) {
      // Another writer (a webhook) appended since the read: read again.
      if (!isStoreError(e, 'WRONG_EXPECTED_REVISION') || attempt >= ATTEMPTS) throw e;
    }
  }
}

/** `f` over the items, `limit` at once; after a failure no item is started, and it returns once none runs. */
async function eachLimited<T>(items: readonly T[], limit: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      try {
        await f(items[next++]!);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const outcomes = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failure) throw failure.reason;
}

/**
 * `store.appendMany(requests)`, then the re-observations (see the module comment), counted in the results:
 * `appended` includes them, `revision` and `position` are the stream's after them.
 */
export async function appendObservations(
  store: EventStore,
  requests: readonly AppendRequest[],
  opts: { readConcurrency?: number } = {},
): Promise<AppendResult[]> {
  const results = await store.appendMany(requests);
  const byStream = new Map(results.map((r) => [r.stream, r]));
  const suspects = requests.filter(
    (q) => (byStream.get(q.stream)?.duplicates ?? 0) > 0 && q.events.some((e) => sourceOf(e) !== null),
  );
  if (suspects.length === 0) return results;
  const again = new Map<string, AppendResult>();
  await eachLimited(suspects, opts.readConcurrency ?? READ_CONCURRENCY, async (q) => {
    const r = await reobserveStream(store, q, byStream.get(q.stream)!);
    if (r) again.set(q.stream, r);
  });
  if (again.size === 0) return results;
  return results.map((r) => {
    const a = again.get(r.stream);
    return a
      ? { ...r, appended: r.appended + a.appended, revision: a.revision, position: a.position ?? r.position }
      : r;
  });
}

import { type ErrorKind, ReconError } from '../errors';
import { DateTime } from 'luxon';
import type { PspProject } from '../config/env';
import { isConnectionError } from '../db/errors';
import { dataOf, isEvent, newEvent } from '../events/catalog';
import { RegisterCountMismatched, SyncWindowCompleted, SyncWindowFailed, syncStream } from '../events/ingest-events';
import type { Logger } from '../log';
import { createPspClient, type PspClient } from '../psp/client';
import { parsePeriodRecord, parseRegisterRecord } from '../psp/parse';
import { windows as cutWindows } from '../psp/windows';
import { isStoreError } from '../store/errors';
import type { EventStore } from '../store/types';
import {
  periodObserved,
  recordRejected,
  registerObserved,
  toAppendRequests,
  type Keyed,
  type SyncObservation,
  type WindowRef,
} from './observations';
import { readMarks } from './watermark';
import { REGISTER_FIELDS } from '../psp/schemas';
import { appendObservations } from './reobservations';

/**
 * Windowed sync of the two PSP data sources (register report, period transactions) into the event
 * store. Per window and project: start a register report asking for every field of section 2.10,
 * poll until ready (capped backoff, bounded wait), stream the records in batches into the payment
 * streams, check the announced count, read the period transactions for the same window, record the
 * window as completed. Every append is idempotent (ids from content), so a run killed anywhere and
 * started again completes what is missing and duplicates nothing.
 */

/** Every field of section 2.10 (and projectId): the projections use most of them, `other` keeps the rest. */
/** Every field of the register record (section 2.10): the raw record kept for audit is then complete. */
export { REGISTER_FIELDS } from '../psp/schemas';

export interface SyncDeps {
  readonly store: EventStore;
  readonly projects: readonly PspProject[];
  readonly log: Logger;
  readonly timezone: string;
  /** Longest wait for one register report to become ready (RECON_REPORT_MAX_WAIT_MS). */
  readonly reportMaxWaitMs: number;
  readonly pspTimeoutMs?: number;
  readonly lookbackDays?: number;
  /** Records per appendMany. */
  readonly batchSize?: number;
  /** Appends in flight at once (default 2); 1 appends strictly one batch after the other. */
  readonly appendsInFlight?: number;
  readonly pollBaseMs?: number;
  readonly pollMaxMs?: number;
  readonly clientFor?: (project: PspProject) => PspClient;
  readonly now?: () => Date;
}

export interface SyncProgress {
  readonly posId: string;
  readonly window: WindowRef;
  readonly phase: 'report' | 'register' | 'period' | 'completed' | 'failed';
  readonly windowsDone: number;
  readonly windowsTotal: number;
  /** Records read in this run so far (register + period, valid or rejected). */
  readonly records: number;
  readonly recordsPerSecond: number;
}

export interface WindowResult {
  readonly posId: string;
  readonly window: WindowRef;
  readonly status: 'completed' | 'failed' | 'skipped';
  readonly reportId?: string;
  readonly announcedCount?: number;
  readonly registerRecords?: number;
  readonly periodRecords?: number;
  readonly rejected?: number;
  readonly appended?: number;
  readonly countMismatch?: boolean;
  readonly reason?: string;
  readonly durationMs?: number;
}

export interface SyncReport {
  readonly windows: WindowResult[];
  readonly completed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly records: number;
  readonly appended: number;
  readonly durationMs: number;
}

export interface SyncRangeOptions {
  /** First local day (YYYY-MM-DD in the configured zone). */
  readonly from: string;
  /** Day after the last one (exclusive). */
  readonly to: string;
  readonly posIds?: readonly string[];
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: SyncProgress) => void;
  /** Skip windows already recorded as completed (a resumed backfill); default: read them again. */
  readonly skipCompleted?: boolean;
}

export type SyncErrorCode = 'SYNC_UNKNOWN_POS' | 'SYNC_REPORT_NOT_READY' | 'SYNC_BAD_RANGE';

export class SyncError extends ReconError {
  get kind(): ErrorKind {
    return this.code === 'SYNC_REPORT_NOT_READY' ? 'unavailable' : 'usage';
  }
  constructor(
    readonly code: SyncErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SyncError';
  }
}

interface PlannedWindow {
  readonly project: PspProject;
  readonly from: Date;
  readonly to: Date;
}

const iso = (d: Date) => d.toISOString();
const windowKey = (w: WindowRef) => `${w.from}|${w.to}`;

function selectProjects(deps: SyncDeps, posIds?: readonly string[]): PspProject[] {
  if (!posIds || posIds.length === 0) return [...deps.projects];
  const wanted = posIds.map((p) => p.toLowerCase());
  for (const w of wanted) {
    if (!deps.projects.some((p) => p.posId.toLowerCase() === w))
      throw new SyncError('SYNC_UNKNOWN_POS', `no configured PSP project has pos_id ${w}`);
  }
  return deps.projects.filter((p) => wanted.includes(p.posId.toLowerCase()));
}

function abortable(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Keys of the windows recorded as completed in `sync-<posId>` (for --skip-completed). */
async function completedWindows(store: EventStore, posId: string): Promise<Set<string>> {
  const keys = new Set<string>();
  for (const e of await store.readStream(syncStream(posId))) {
    if (isEvent(SyncWindowCompleted, e)) keys.add(windowKey(dataOf(SyncWindowCompleted, e).window));
  }
  return keys;
}

/**
 * The windows of `[fromDay, toDay)` for `project` that have begun by `now`, the last one ending at now: the
 * PSP has nothing later, and a window recorded as completed must not claim a time it could not read (the
 * incremental sync resumes from what was read, watermark.ts).
 */
function windowsUntilNow(
  deps: SyncDeps,
  project: PspProject,
  fromDay: string,
  toDay: string,
  now: Date,
): PlannedWindow[] {
  return cutWindows(fromDay, toDay, deps.timezone)
    .filter((w) => w.from < now)
    .map((w) => ({ project, from: w.from, to: w.to > now ? now : w.to }));
}

function planRange(
  deps: SyncDeps,
  projects: readonly PspProject[],
  fromDay: string,
  toDay: string,
  now: Date,
): PlannedWindow[] {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(fromDay) || !/^\d{4}-\d{2}-\d{2}$/.test(toDay))
    throw new SyncError('SYNC_BAD_RANGE', 'dates are YYYY-MM-DD');
  if (fromDay >= toDay)
    throw new SyncError('SYNC_BAD_RANGE', `--from ${fromDay} must be before --to ${toDay} (--to is exclusive)`);
  return projects.flatMap((project) => windowsUntilNow(deps, project, fromDay, toDay, now));
}

/** `recon sync --from --to`: every window of the range for each selected project, up to now. */
export async function syncRange(deps: SyncDeps, opts: SyncRangeOptions): Promise<SyncReport> {
  const projects = selectProjects(deps, opts.posIds);
  const now = (deps.now ?? (() => new Date()))();
  const planned = planRange(deps, projects, opts.from, opts.to, now);
  if (planned.length === 0 && projects.length > 0)
    deps.log.warn('the range begins after now: nothing to read', { from: opts.from, to: opts.to, now: iso(now) });
  return runWindows(deps, planned, opts);
}

/**
 * `recon sync --incremental` (the nightly job): per project, up to now, from the earlier of
 *  - the watermark (the end of what was read without a gap, watermark.ts) minus the lookback, for the
 *    records the PSP lists late;
 *  - the start of the earliest failed window not read since (it was cut with the lookback already).
 * A project never synced starts `lookbackDays` before today.
 */
export async function syncIncremental(
  deps: SyncDeps,
  opts: Omit<SyncRangeOptions, 'from' | 'to' | 'skipCompleted'> = {},
): Promise<SyncReport> {
  const now = (deps.now ?? (() => new Date()))();
  const lookback = deps.lookbackDays ?? 3;
  const local = (d: Date) => DateTime.fromJSDate(d, { zone: deps.timezone });
  const planned: PlannedWindow[] = [];
  for (const project of selectProjects(deps, opts.posIds)) {
    const { watermark, unreadFrom } = readMarks(await deps.store.readStream(syncStream(project.posId)));
    let start = local(watermark ?? now)
      .minus({ days: lookback })
      .startOf('day');
    if (unreadFrom && unreadFrom < start.toJSDate()) start = local(unreadFrom).startOf('day');
    deps.log.info('incremental sync', {
      posId: project.posId,
      watermark: watermark && iso(watermark),
      unreadFrom: unreadFrom && iso(unreadFrom),
      from: iso(start.toJSDate()),
    });
    const end = local(now).startOf('day').plus({ days: 1 });
    planned.push(...windowsUntilNow(deps, project, start.toISODate()!, end.toISODate()!, now));
  }
  return runWindows(deps, planned, opts);
}

async function runWindows(
  deps: SyncDeps,
  planned: PlannedWindow[],
  opts: Omit<SyncRangeOptions, 'from' | 'to'>,
): Promise<SyncReport> {
  const started = Date.now();
  const results: WindowResult[] = [];
  const clients = new Map<string, PspClient>();
  const clientOf = (p: PspProject) => {
    let c = clients.get(p.posId);
    if (!c) {
      c = deps.clientFor ? deps.clientFor(p) : createPspClient(p, { timeoutMs: deps.pspTimeoutMs, log: deps.log });
      clients.set(p.posId, c);
    }
    return c;
  };
  const done = new Map<string, Set<string>>();
  if (opts.skipCompleted) {
    for (const posId of new Set(planned.map((w) => w.project.posId)))
      done.set(posId, await completedWindows(deps.store, posId));
  }
  const counters = { records: 0, windowsDone: 0, started };
  const progress = (posId: string, window: WindowRef, phase: SyncProgress['phase']) => {
    const secs = Math.max((Date.now() - counters.started) / 1000, 0.001);
    opts.onProgress?.({
      posId,
      window,
      phase,
      windowsDone: counters.windowsDone,
      windowsTotal: planned.length,
      records: counters.records,
      recordsPerSecond: Math.round(counters.records / secs),
    });
  };
  for (const w of planned) {
    opts.signal?.throwIfAborted();
    const ref = { from: iso(w.from), to: iso(w.to) };
    if (done.get(w.project.posId)?.has(windowKey(ref))) {
      results.push({ posId: w.project.posId, window: ref, status: 'skipped' });
      counters.windowsDone++;
      continue;
    }
    const r = await syncWindow(deps, clientOf(w.project), w.project.posId, w.from, w.to, {
      signal: opts.signal,
      counters,
      progress,
    });
    counters.windowsDone++;
    progress(w.project.posId, ref, r.status === 'completed' ? 'completed' : 'failed');
    results.push(r);
  }
  return {
    windows: results,
    completed: results.filter((r) => r.status === 'completed').length,
    failed: results.filter((r) => r.status === 'failed').length,
    skipped: results.filter((r) => r.status === 'skipped').length,
    records: counters.records,
    appended: results.reduce((s, r) => s + (r.appended ?? 0), 0),
    durationMs: Date.now() - started,
  };
}

interface WindowCtx {
  readonly signal?: AbortSignal;
  readonly counters: { records: number };
  readonly progress: (posId: string, window: WindowRef, phase: SyncProgress['phase']) => void;
}

/**
 * Appends batches while the next ones are being read and parsed. At most `maxInFlight` appends run at
 * once (so memory stays at `maxInFlight + 1` batches whatever the report's size), and a batch waits for
 * any batch in flight that writes to one of its streams: per payment, events keep the report's order.
 * Two in flight keep PostgreSQL busy while this process prepares and sends the next batch.
 */
function createBatchWriter(store: EventStore, maxInFlight: number) {
  interface InFlight {
    readonly streams: ReadonlySet<string>;
    done: Promise<void>;
  }
  const inflight = new Set<InFlight>();
  let failure: unknown;
  let appended = 0;
  const shares = (a: ReadonlySet<string>, b: ReadonlySet<string>) => {
    const [small, large] = a.size <= b.size ? [a, b] : [b, a];
    for (const s of small) if (large.has(s)) return true;
    return false;
  };
  const settle = async (): Promise<void> => {
    while (inflight.size) await Promise.all([...inflight].map((f) => f.done));
  };
  return {
    async write(items: Keyed[]) {
      const requests = toAppendRequests(items);
      const streams = new Set(requests.map((r) => r.stream));
      for (;;) {
        if (failure) throw failure;
        const blocking = [...inflight].filter((f) => shares(f.streams, streams));
        if (blocking.length === 0 && inflight.size < maxInFlight) break;
        await Promise.race((blocking.length ? blocking : [...inflight]).map((f) => f.done));
      }
      const entry: InFlight = { streams, done: Promise.resolve() };
      // appendMany, then any row that went back to an earlier content observed again (reobservations.ts)
      entry.done = appendObservations(store, requests)
        .then(
          (rs) => {
            appended += rs.reduce((s, r) => s + r.appended, 0);
          },
          (e) => {
            failure ??= e;
          },
        )
        .finally(() => {
          inflight.delete(entry);
        });
      inflight.add(entry);
    },
    /** Waits for every append in flight, whatever its outcome (before giving up on a window). */
    settle,
    async finish(): Promise<number> {
      await settle();
      if (failure) throw failure;
      return appended;
    },
  };
}

async function readRecords(
  records: AsyncIterable<string>,
  parse: (text: string) => Keyed,
  batchSize: number,
  writer: ReturnType<typeof createBatchWriter>,
  ctx: WindowCtx,
  onBatch: () => void,
): Promise<{ received: number; rejected: number }> {
  let batch: Keyed[] = [];
  let received = 0;
  let rejected = 0;
  for await (const text of records) {
    ctx.signal?.throwIfAborted();
    const k = parse(text);
    if (k.event.type === 'SourceRecordRejected') rejected++;
    batch.push(k);
    received++;
    ctx.counters.records++;
    if (batch.length >= batchSize) {
      await writer.write(batch);
      batch = [];
      onBatch();
    }
  }
  if (batch.length) await writer.write(batch);
  return { received, rejected };
}

/** One window being synced: what its steps share. `reportId` is known once the report is started. */
interface WindowRun {
  readonly deps: SyncDeps;
  readonly client: PspClient;
  readonly posId: string;
  readonly from: Date;
  readonly to: Date;
  readonly ctx: WindowCtx;
  readonly window: WindowRef;
  readonly log: Logger;
  readonly batchSize: number;
  readonly now: () => Date;
  readonly writer: ReturnType<typeof createBatchWriter>;
  readonly started: number;
  reportId: string;
}

/**
 * One window: the register report (started, waited for, read), then the period records, then the window's
 * SyncWindowCompleted; a failure that is the PSP's is recorded as SyncWindowFailed (read again next run).
 */
export async function syncWindow(
  deps: SyncDeps,
  client: PspClient,
  posId: string,
  from: Date,
  to: Date,
  ctx: WindowCtx,
): Promise<WindowResult> {
  const window = { from: iso(from), to: iso(to) };
  const run: WindowRun = {
    deps,
    client,
    posId,
    from,
    to,
    ctx,
    window,
    log: deps.log.child({ posId, window: `${window.from}..${window.to}` }),
    batchSize: deps.batchSize ?? 1000,
    now: deps.now ?? (() => new Date()),
    writer: createBatchWriter(deps.store, Math.max(1, deps.appendsInFlight ?? 2)),
    started: Date.now(),
    reportId: '',
  };
  try {
    const register = await readRegister(run);
    const period = await readPeriod(run);
    return await windowCompleted(run, register, period);
  } catch (e) {
    return await windowFailed(run, e);
  }
}

/** The register report of the window, read and appended; a count other than announced is recorded. */
async function readRegister(r: WindowRun) {
  const { deps, posId, window, ctx } = r;
  ctx.progress(posId, window, 'report');
  const start = await r.client.startRegisterReport({
    from: r.from,
    to: r.to,
    transactionDetails: [...REGISTER_FIELDS],
  });
  r.reportId = start.reportId;
  const reportId = start.reportId;
  r.log.info('register report started', { reportId, announcedCount: start.count });
  const records = await waitForReport(deps, r.client, reportId, ctx.signal);
  const registerMeta: SyncObservation = { source: 'register', reportId, window, observedAt: iso(r.now()) };
  const register = await readRecords(
    records,
    (text) => {
      const p = parseRegisterRecord(text);
      return p.ok
        ? registerObserved(posId, text, p.value, registerMeta)
        : recordRejected(posId, 'register', p.field, p.reason, text, {
            reportId,
            window,
            observedAt: registerMeta.observedAt,
          });
    },
    r.batchSize,
    r.writer,
    ctx,
    () => ctx.progress(posId, window, 'register'),
  );
  const mismatch = register.received !== start.count;
  if (mismatch) {
    r.log.warn('register count differs from the announced count', {
      reportId,
      announced: start.count,
      received: register.received,
    });
    await r.writer.finish();
    await deps.store.append(syncStream(posId), [
      newEvent(RegisterCountMismatched, {
        posId,
        window,
        reportId,
        announcedCount: start.count,
        receivedCount: register.received,
        detectedAt: iso(r.now()),
      }),
    ]);
  }
  return { ...register, announced: start.count, mismatch };
}

/** The period records of the window, read and appended. */
async function readPeriod(r: WindowRun) {
  const { posId, window, ctx } = r;
  ctx.progress(posId, window, 'period');
  // The window's report id: the period records of one fetch are told apart from another fetch's, so that
  // two different records of one operation in one fetch are a duplicate (with null, the
  // second replaced the first unseen), and they wait for the window's SyncWindowCompleted like its rows.
  const periodMeta: SyncObservation = { source: 'period', reportId: r.reportId, window, observedAt: iso(r.now()) };
  return readRecords(
    r.client.periodTransactions(r.from, r.to),
    (text) => {
      const p = parsePeriodRecord(text);
      return p.ok
        ? periodObserved(posId, text, p.value, periodMeta)
        : recordRejected(posId, 'period', p.field, p.reason, text, { window, observedAt: periodMeta.observedAt });
    },
    r.batchSize,
    r.writer,
    ctx,
    () => ctx.progress(posId, window, 'period'),
  );
}

/** Every append of the window done: SyncWindowCompleted with its counts. */
async function windowCompleted(
  r: WindowRun,
  register: Awaited<ReturnType<typeof readRegister>>,
  period: Awaited<ReturnType<typeof readPeriod>>,
): Promise<WindowResult> {
  const { posId, window, reportId } = r;
  const appended = await r.writer.finish();
  const durationMs = Date.now() - r.started;
  const rejected = register.rejected + period.rejected;
  const counts = {
    announcedCount: register.announced,
    registerRecords: register.received,
    periodRecords: period.received,
    rejected,
    appended,
  };
  await r.deps.store.append(syncStream(posId), [
    newEvent(SyncWindowCompleted, { posId, window, reportId, ...counts, durationMs, completedAt: iso(r.now()) }),
  ]);
  r.log.info('window synced', {
    reportId,
    announced: register.announced,
    register: register.received,
    period: period.received,
    rejected,
    appended,
    durationMs,
  });
  return { posId, window, status: 'completed', reportId, ...counts, countMismatch: register.mismatch, durationMs };
}

/** A window that failed: nothing of it keeps running; the PSP's failure is recorded, the store's stops the run. */
async function windowFailed(r: WindowRun, e: unknown): Promise<WindowResult> {
  const { posId, window, reportId } = r;
  // Nothing keeps running once the call returns: an interrupted run leaves no append behind it.
  await r.writer.settle();
  if (r.ctx.signal?.aborted) throw r.ctx.signal.reason ?? e;
  // The store itself failing cannot be recorded in the store: stop the run.
  if (isStoreError(e) || isConnectionError(e)) throw e;
  const code = (e as { code?: unknown }).code;
  const reason = `${typeof code === 'string' ? `${code}: ` : ''}${(e as Error).message ?? String(e)}`;
  r.log.error('window failed; it will be read again on the next run', { reportId: reportId || undefined, reason });
  await r.deps.store.append(syncStream(posId), [
    newEvent(SyncWindowFailed, { posId, window, reason, failedAt: iso(r.now()) }),
  ]);
  const durationMs = Date.now() - r.started;
  return { posId, window, status: 'failed', reportId: reportId || undefined, reason, durationMs };
}

/** Polls `fetch` with capped exponential backoff until the report is ready or the wait is over. */
async function waitForReport(
  deps: SyncDeps,
  client: PspClient,
  reportId: string,
  signal?: AbortSignal,
): Promise<AsyncIterable<string>> {
  const base = deps.pollBaseMs ?? 250;
  const cap = deps.pollMaxMs ?? 5000;
  const deadline = Date.now() + deps.reportMaxWaitMs;
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    const r = await client.fetchRegisterReport(reportId);
    if (r.ready) return r.records;
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new SyncError(
        'SYNC_REPORT_NOT_READY',
        `register report ${reportId} was not ready after ${Math.round(deps.reportMaxWaitMs / 1000)} s (${attempt + 1} polls; RECON_REPORT_MAX_WAIT_MS=${deps.reportMaxWaitMs})`,
      );
    }
    await abortable(Math.min(cap, base * 2 ** Math.min(attempt, 20), left), signal);
  }
}

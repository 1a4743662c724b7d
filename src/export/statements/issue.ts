import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { boundedMap } from '../../bounded-map';
import { connectionSpecOf, type Sql } from '../../db/connect';
import { newEvent } from '../../events/catalog';
import { StatementIssued, statementStream } from '../../events/statement-events';
import { closingsByReceiver, receiversOf } from '../../ledger/ledger-queries';
import type { Logger } from '../../log';
import { formatPosition, parsePosition, type EventStore, type Position } from '../../store/types';
import {
  checkStatementFileNames,
  figuresDigest,
  monthRange,
  payoutsFileName,
  statementFileName,
  writePayoutsWorkbook,
  type StatementFigures,
  type StatementMeta,
} from './workbooks';
import { issuedBefore, openAtPreviousStatements, previousRunOf, type IssuedRun } from './previous';
import { memoize } from '../../memoize';
import { type StatementsConfig, statementsConfigFromEnv, statementWorkersFromEnv } from '../../config/statements';
import { type StatementJob, type WrittenStatementFiles, writeStatementFiles } from './statement-job';
import { writeInWorkers } from './statement-pool';
import { claimNumber, directoryAt, headerOf, issuedAtOf, type NumberClaim } from './header';
import { recordedHeld } from '../payouts/recorded-holds';
import { closingsPaidOut, paidLinesAt, paidSincePrevious, payoutFigures } from './payout-figures';
import { issuedPayouts, statementPayouts, withPaidOut } from './payouts';
import { ExportError } from '../errors';
import { leaveOutOversized, type RefusedStatement } from './oversize';
import { storePaymentEvents } from './details';
import { ledgerStatementQueries, type StatementQueries } from './queries';
import { describeFile, type IssuedFile } from './runs';
import { checkMonthEnded, checkMonthZone, checkPositionWithinHead, monthBefore, runsInZone } from './controls';
import { splitNotStated } from './not-stated';
import { correctionsAt, monthRuns, monthSettings, recordedSettings, shownPayouts, unchangedRun } from './corrections';

/**
 * `recon statements`: cuts the month's figures at one event-store position (the journal's checkpoint
 * unless one is given), writes one workbook per sub-merchant and the Payouts index, and records the run
 * (statement_runs row + StatementIssued event) so that finance can prove what was sent and regenerate it.
 */

/**
 * The journal's checkpoint: every event up to it is in the ledger, none after it. A live build that has
 * applied nothing yet (empty store) is at 0/0; no live build at all means the ledger was never built.
 */
export async function ledgerPosition(sql: Sql, projection = 'journal'): Promise<Position | undefined> {
  const [row] = await sql<{ checkpoint: string | null }[]>`
    select checkpoint from projection_builds where name = ${projection} and status = 'live'`;
  if (!row) return undefined;
  return row.checkpoint ? parsePosition(row.checkpoint) : { commit: 0n, prepare: 0n };
}

export interface StatementDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly log: Logger;
  readonly timezone: string;
  readonly queries?: StatementQueries;
  /** issuer, contact and default language (RECON_ISSUER_*, RECON_STATEMENT_*; the process's when absent) */
  readonly statements?: StatementsConfig;
  /** lines whose payments' events are read together (statement-details.ts; tests make it small) */
  readonly linesPerDetailRead?: number;
  /**
   * worker threads writing statements at once (RECON_STATEMENT_WORKERS when absent; 1: in this thread), and the
   * month's lines from which they are started (5,000 when absent)
   */
  readonly workers?: { readonly count: number; readonly fromLines?: number };
}

export interface IssueOptions {
  readonly month: string;
  readonly outDir: string;
  readonly subMerchantId?: string;
  /** cut here instead of at the journal's checkpoint (regenerating a statement already sent) */
  readonly atPosition?: Position;
  readonly signal?: AbortSignal;
  /** a draft of a month not ended: marked PROVISIONAL, not recorded as issued (statement-controls.ts) */
  readonly provisional?: boolean;
  /** build on statements issued in another time zone (the operator re-bases explicitly) */
  readonly rebaseTimezone?: boolean;
  /** the clock, for tests; the month must have ended by it */
  readonly now?: Date;
  readonly onProgress?: (p: { done: number; total: number; subMerchantId: string; lines: number }) => void;
}

export interface IssueResult {
  readonly runId: string;
  readonly month: string;
  readonly timezone: string;
  readonly position: string;
  readonly figuresSha256: string;
  readonly figures: readonly StatementFigures[];
  readonly statements: number;
  readonly lines: number;
  readonly files: readonly IssuedFile[];
  readonly eventId: string;
  /** false when the same run (same figures at the same position) had already been issued */
  readonly newEvent: boolean;
  /** a draft: nothing recorded (runId and eventId empty) */
  readonly provisional: boolean;
  /** the previous month, when its statement was never issued */
  readonly previousMonthNotIssued?: string;
  /** the zone of the statements this run re-based from */
  readonly rebasedFrom?: string;
  /** the run was recorded before (nothing changed since): when it was issued; nothing new was recorded */
  readonly reproduces?: Date;
  /** a correction of the month's statements issued before: when the latest of them was issued */
  readonly corrects?: Date;
  /** statements left out, a figure of theirs beyond what a workbook holds: the run is issued without them */
  readonly refused?: readonly RefusedStatement[];
}

/**
 * Records a run after its files are written: the statements' numbers first (a run whose statements could not
 * all be numbered is not recorded as issued), then the StatementIssued event with the files' hashes and the
 * issue time, then the statement_runs row.
 */
async function recordRun(
  deps: StatementDeps,
  run: {
    event: ReturnType<typeof newEvent>;
    claims: readonly NumberClaim[];
    files: readonly IssuedFile[];
    issuedAt: Date;
    subMerchantId: string | null;
    statements: number;
  },
): Promise<{ runId: string; appended: boolean }> {
  for (const c of run.claims)
    if (c.append)
      await deps.store.append(c.append.stream, [c.append.event], { expectedRevision: c.append.expectedRevision });
  const { files, event } = run;
  const d = event.data as { month: string; position: string; figuresSha256: string };
  const recordedEvent = {
    ...event,
    metadata: {
      files: files.map(({ name, sha256, bytes, financeOnly }) => ({
        name,
        sha256,
        bytes,
        ...(financeOnly ? { financeOnly } : {}),
      })),
      issuedAt: run.issuedAt.toISOString(),
    },
  };
  const appended = await deps.store.append(statementStream(d.month), [recordedEvent]);
  const runId = randomUUID();
  await deps.sql`
    insert into statement_runs (run_id, month, timezone, sub_merchant_id, position, figures_sha256, statements, files, event_id)
    values (${runId}, ${d.month}, ${deps.timezone}, ${run.subMerchantId}, ${d.position}, ${d.figuresSha256}, ${run.statements},
            ${deps.sql.json(files.map(({ name, sha256, bytes, subMerchantId, financeOnly }) => ({ name, sha256, bytes, ...(subMerchantId ? { subMerchantId } : {}), ...(financeOnly ? { financeOnly } : {}) })) as never)}, ${event.id})`;
  return { runId, appended: appended.appended > 0 };
}

/** Where the run is cut and what it reads through: the month checked, the position, the queries. */
async function cutOf(deps: StatementDeps, opts: IssueOptions) {
  monthRange(opts.month, deps.timezone); // validates the month
  const provisional = checkMonthEnded(opts.month, deps.timezone, opts.now ?? new Date(), opts.provisional ?? false);
  if (opts.atPosition) await checkPositionWithinHead(deps.store, opts.atPosition);
  await checkMonthZone(deps.store, opts.month, deps.timezone);
  const queries = deps.queries ?? ledgerStatementQueries(deps.sql);
  const position = opts.atPosition ?? (await ledgerPosition(deps.sql));
  if (!position)
    throw new ExportError('EXPORT_NO_POSITION', 'the journal has not been built yet: run `recon project` first');
  // injected queries (tests) stand without a journal to find the payments' streams in
  const paymentEvents = deps.queries ? undefined : storePaymentEvents(deps.sql, deps.store, position);
  const base = { month: opts.month, timezone: deps.timezone, atPosition: position };
  return { provisional, queries, position, positionText: formatPosition(position), paymentEvents, base };
}
type Cut = Awaited<ReturnType<typeof cutOf>>;

/** The closings of a run issued before (recorded with it, or read back from the journal at its cut). */
function closingsOfRun(deps: StatementDeps) {
  return memoize((run: IssuedRun) =>
    run.closings
      ? Promise.resolve(run.closings)
      : (async () =>
          closingsByReceiver(deps.sql, {
            month: run.month,
            timezone: run.timezone ?? deps.timezone,
            atPosition: run.cut,
            ...(run.subMerchantId ? { names: await receiversOf(deps.sql, run.subMerchantId, run.cut) } : {}),
          }))(),
  );
}

/**
 * The month's figures at the cut: the journal's, less what was paid out, opened at the statements issued before
 * (previous.ts, their figures as issued, once per run), months never stated split apart.
 */
async function monthFigures(deps: StatementDeps, opts: IssueOptions, cut: Cut) {
  const { position, base, queries } = cut;
  // what was paid out at the cut comes off the ledger's balances (docs/bank.md, "Payouts and holds")
  const paid = await payoutFigures(deps, position, { month: opts.month, timezone: deps.timezone });
  const ledger = withPaidOut(
    await queries.figures({ ...base, ...(opts.subMerchantId ? { subMerchantId: opts.subMerchantId } : {}) }),
    paid.lines,
    opts.month,
    deps.timezone,
  );
  const zoned = runsInZone(
    await issuedBefore(deps.store, opts.month, null, position),
    deps.timezone,
    opts.rebaseTimezone ?? false,
  );
  const runs = zoned.runs;
  // what this run states per receiver name: recorded with it, for the next month to open at
  const closings = await closingsByReceiver(deps.sql, {
    month: opts.month,
    timezone: deps.timezone,
    atPosition: position,
    ...(opts.subMerchantId ? { names: await receiversOf(deps.sql, opts.subMerchantId, position) } : {}),
  });
  const namesOf = memoize((id: string) => receiversOf(deps.sql, id, position));
  await closingsPaidOut(closings, paid.lines, opts.month, deps.timezone, namesOf);
  const opened = await openAtPreviousStatements(ledger, runs, { closingsOf: closingsOfRun(deps), namesOf });
  const since = await paidSincePrevious(opened, runs, {
    month: opts.month,
    timezone: deps.timezone,
    paidNow: paid.lines,
    // a run recorded before closings were kept stated the journal's, nothing paid out deducted
    paidAt: memoize(async (run: IssuedRun) => (run.closings ? paidLinesAt(deps, run.cut) : [])),
    namesOf,
  });
  const figures = await splitNotStated(since.figures, runs, { ...base, queries, namesOf, timezone: deps.timezone });
  if (opts.subMerchantId && figures.length === 0) {
    throw new ExportError(
      'EXPORT_NOTHING_TO_ISSUE',
      `no figures for sub-merchant ${opts.subMerchantId} in ${opts.month} at position ${cut.positionText}`,
    );
  }
  return { paid, zoned, runs, closings, namesOf, since, figures };
}
type Month = Awaited<ReturnType<typeof monthFigures>>;

/** The month's payouts (held, paid out, statuses) and what the run's documents say of it besides the figures. */
async function payoutsAndMeta(deps: StatementDeps, opts: IssueOptions, cut: Cut, m: Month) {
  const payouts = await statementPayouts(
    {
      store: deps.store,
      namesOf: m.namesOf,
      recordedHeld: (h, name, currency) => recordedHeld(deps.sql, h, name, currency),
    },
    {
      month: opts.month,
      timezone: deps.timezone,
      cut: cut.position,
      figures: m.figures,
      runs: m.runs,
      held: m.paid.held,
      paid: m.paid.lines,
      statuses: m.paid.statuses,
    },
  );
  const previousMonth = monthBefore(opts.month);
  const previousMonthNotIssued = m.runs.some((r) => r.month === previousMonth) ? undefined : previousMonth;
  const figuresSha256 = figuresDigest(opts.month, deps.timezone, m.figures);
  const meta = {
    month: opts.month,
    timezone: deps.timezone,
    position: cut.positionText,
    figuresSha256,
    provisional: cut.provisional,
    ...(m.zoned.rebasedFrom ? { rebasedFrom: m.zoned.rebasedFrom } : {}),
    ...(previousMonthNotIssued ? { previousMonthNotIssued } : {}),
  };
  return { payouts, previousMonthNotIssued, figuresSha256, meta };
}

/**
 * One statement per sub-merchant (a workbook and a PDF, and finance's audit file beside them), and the Payouts
 * index unless the run is for one.
 */
function filesOf(opts: IssueOptions, figures: readonly StatementFigures[], provisional: boolean) {
  const bySubMerchant = new Map<string, StatementFigures[]>();
  for (const f of figures) bySubMerchant.set(f.subMerchantId, [...(bySubMerchant.get(f.subMerchantId) ?? []), f]);
  const nameOf = (id: string) => bySubMerchant.get(id)![0]!.subMerchantName;
  checkStatementFileNames(
    [...bySubMerchant.keys()].map((id) => [id, nameOf(id)] as const),
    opts.month,
  );
  const fileOf = (id: string, file: 'xlsx' | 'pdf' | 'audit') =>
    statementFileName(id, opts.month, provisional, nameOf(id), file);
  const indexName = opts.subMerchantId ? undefined : payoutsFileName(opts.month, provisional);
  // what the run states (StatementIssued's data, from which its id comes): the audit files are left out, since
  // each follows from its statement's name, so a run recorded before they were written is found again at its cut
  const names = [
    ...[...bySubMerchant.keys()].flatMap((id) => [fileOf(id, 'xlsx'), fileOf(id, 'pdf')]),
    ...(indexName ? [indexName] : []),
  ];
  return { bySubMerchant, fileOf, indexName, names };
}
type Files = ReturnType<typeof filesOf>;

/**
 * The run as it will be recorded: its id comes from its data, so a run already recorded (the same figures at
 * the same cut) is found, and its statements keep the number and the issue time they were given then.
 */
async function runEventOf(
  deps: StatementDeps,
  opts: IssueOptions,
  cut: Cut,
  m: Month,
  p: Awaited<ReturnType<typeof payoutsAndMeta>>,
  files: Files,
) {
  // the month issued before: its first run's issuer and texts, its runs to reproduce or correct
  const runsOfMonth = cut.provisional ? [] : await monthRuns(deps.store, opts.month, deps.timezone);
  const settings = monthSettings(runsOfMonth, deps.statements ?? statementsConfigFromEnv());
  const event = newEvent(StatementIssued, {
    month: opts.month,
    timezone: deps.timezone,
    subMerchantId: opts.subMerchantId ?? null,
    position: cut.positionText,
    figuresSha256: p.figuresSha256,
    statements: files.bySubMerchant.size,
    files: files.names,
    closings: [...m.closings]
      .map(([k, v]) => [...k.split('\u0000'), v.toString()] as [string, string, string])
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)),
    payouts: issuedPayouts(p.payouts),
    ...(settings.record ? { settings: recordedSettings(settings.config) } : {}),
  });
  return { runsOfMonth, settings, event };
}

/** When the statements are dated, what they correct, and the payouts each lists. */
async function datedAndShown(
  deps: StatementDeps,
  opts: IssueOptions,
  cut: Cut,
  m: Month,
  payouts: Awaited<ReturnType<typeof payoutsAndMeta>>['payouts'],
  run: Awaited<ReturnType<typeof runEventOf>>,
  files: Files,
) {
  const recorded = cut.provisional
    ? undefined
    : (await deps.store.readStream(statementStream(opts.month))).find((e) => e.id === run.event.id);
  // a draft is dated when it is drawn up; an issued statement when its run was (or is now) recorded
  const issuedAt = recorded ? issuedAtOf(recorded) : (opts.now ?? new Date());
  const corrections = cut.provisional ? undefined : await correctionsAt(deps.store, run.runsOfMonth, cut.position);
  // the payouts deducted beyond the month's own are listed on the Paid out sheet with them
  const shown = await shownPayouts(
    payouts.map((p) => {
      const earlier = m.since.lines.filter((l) => l.subMerchantId === p.subMerchantId && l.currency === p.currency);
      return earlier.length > 0 ? { ...p, paid: [...earlier, ...p.paid] } : p;
    }),
    [...files.bySubMerchant.keys()],
    corrections,
  );
  return { recorded, issuedAt, corrections, shown };
}
type Dated = Awaited<ReturnType<typeof datedAndShown>>;

// Statements written at once in this thread: one's PostgreSQL reads overlap another's writing.
const STATEMENTS_IN_FLIGHT = 2;

// A month with fewer lines is written in this thread: starting a worker costs a second or two.
const POOL_FROM_LINES = 5000;

/**
 * The worker threads the statements are written on (statement-pool.ts), or none: one worker, one statement,
 * a small month, queries given by a test, another event store than PostgreSQL, or a connection that cannot be
 * handed on all write in this thread.
 */
function poolOf(deps: StatementDeps, cut: Cut, files: Files) {
  const count = deps.workers?.count ?? statementWorkersFromEnv();
  const fromLines = deps.workers?.fromLines ?? POOL_FROM_LINES;
  const statements = files.bySubMerchant.size;
  if (count < 2 || statements < 2 || !cut.paymentEvents || deps.store.backend !== 'postgres') return undefined;
  let lines = 0;
  for (const figures of files.bySubMerchant.values()) for (const f of figures) lines += f.operations;
  if (lines < fromLines) return undefined;
  const connection = connectionSpecOf(deps.sql);
  return connection ? { workers: Math.min(count, statements), connection } : undefined;
}

type WriteContext = {
  cut: Cut;
  m: Month;
  meta: StatementMeta;
  files: Files;
  dated: Dated;
  run: Awaited<ReturnType<typeof runEventOf>>;
};

/** One sub-merchant's statement drawn up: its header (number, directory row at the cut), reserve, previous statement. */
async function drawStatement(
  deps: StatementDeps,
  opts: IssueOptions,
  ctx: WriteContext,
  numbers: ReadonlyMap<string, number | null>,
  subMerchantId: string,
): Promise<StatementJob> {
  const { cut, m, dated } = ctx;
  const corrects = dated.shown.statements.get(subMerchantId);
  const header = {
    ...headerOf(
      ctx.run.settings.config,
      await directoryAt(deps.store, subMerchantId, cut.position),
      numbers.get(subMerchantId) ?? null,
      dated.issuedAt,
    ),
    ...(corrects ? { corrects } : {}),
  };
  const reserve = await cut.queries.reserve({ ...cut.base, subMerchantId });
  const previous = previousRunOf(m.runs, subMerchantId, await m.namesOf(subMerchantId));
  return {
    subMerchantId,
    figures: ctx.files.bySubMerchant.get(subMerchantId)!,
    payouts: dated.shown.sections.filter((p) => p.subMerchantId === subMerchantId),
    reserve,
    ...(previous ? { previous } : {}),
    base: cut.base,
    meta: ctx.meta,
    header,
    xlsx: path.join(opts.outDir, ctx.files.fileOf(subMerchantId, 'xlsx')),
    pdf: path.join(opts.outDir, ctx.files.fileOf(subMerchantId, 'pdf')),
    audit: path.join(opts.outDir, ctx.files.fileOf(subMerchantId, 'audit')),
  };
}

/**
 * Every sub-merchant's workbook and PDF, on worker threads when the month is large enough (poolOf), else in this
 * thread. Numbers are claimed first, in the sub-merchants' order, so that they do not depend on which statement
 * is written first; the files are listed in that order too.
 */
async function writeStatements(deps: StatementDeps, opts: IssueOptions, ctx: WriteContext) {
  const { cut, files } = ctx;
  const ids = [...files.bySubMerchant.keys()];
  const claims: NumberClaim[] = [];
  const numbers = new Map<string, number | null>();
  for (const id of ids) {
    opts.signal?.throwIfAborted();
    const claim = cut.provisional ? undefined : await claimNumber(deps.store, id, opts.month, ctx.run.event.id);
    if (claim) claims.push(claim);
    numbers.set(id, claim?.number ?? null);
  }
  let lines = 0;
  let done = 0;
  const progress = (w: WrittenStatementFiles, job: StatementJob) => {
    lines += w.lines;
    opts.onProgress?.({ done: ++done, total: ids.length, subMerchantId: job.subMerchantId, lines });
  };
  const draw = (id: string) => drawStatement(deps, opts, ctx, numbers, id);
  const linesPerDetailRead = deps.linesPerDetailRead ? { linesPerDetailRead: deps.linesPerDetailRead } : {};
  const pool = poolOf(deps, cut, files);
  deps.log.info('writing statements', { month: opts.month, statements: ids.length, workerThreads: pool?.workers ?? 0 });
  const written = pool
    ? await writeInWorkers(ids, draw, { ...pool, ...linesPerDetailRead, ...signalOf(opts) }, progress)
    : await boundedMap(ids, STATEMENTS_IN_FLIGHT, opts.signal, async (id) => {
        const job = await draw(id);
        const w = await writeStatementFiles(job, {
          queries: cut.queries,
          ...(cut.paymentEvents ? { paymentEvents: cut.paymentEvents } : {}),
          ...linesPerDetailRead,
        });
        progress(w, job);
        return w;
      });
  return { claims, files: written.flatMap((w) => w.files), lines };
}

const signalOf = (opts: IssueOptions) => (opts.signal ? { signal: opts.signal } : {});

/** The run recorded (unless a draft, or recorded before), and what it did, for the caller. */
async function recordedResult(
  deps: StatementDeps,
  opts: IssueOptions,
  ctx: {
    cut: Cut;
    m: Month;
    figuresSha256: string;
    previousMonthNotIssued: string | undefined;
    dated: Dated;
    event: ReturnType<typeof newEvent>;
    written: Awaited<ReturnType<typeof writeStatements>>;
    statements: number;
  },
): Promise<IssueResult> {
  const { cut, dated, written, event } = ctx;
  const stated = {
    month: opts.month,
    timezone: deps.timezone,
    position: cut.positionText,
    figuresSha256: ctx.figuresSha256,
    figures: ctx.m.figures,
    statements: ctx.statements,
    lines: written.lines,
    files: written.files,
  };
  const extra = {
    provisional: cut.provisional,
    ...(dated.recorded ? { reproduces: dated.issuedAt } : {}),
    ...(dated.corrections?.latest ? { corrects: dated.corrections.latest.issuedAt } : {}),
    ...(ctx.previousMonthNotIssued ? { previousMonthNotIssued: ctx.previousMonthNotIssued } : {}),
    ...(ctx.m.zoned.rebasedFrom ? { rebasedFrom: ctx.m.zoned.rebasedFrom } : {}),
  };
  // a draft is never recorded: it is not what was issued, and never a later month's opening
  if (cut.provisional) {
    deps.log.info('provisional statements written (not recorded as issued)', {
      month: opts.month,
      lines: written.lines,
    });
    return { runId: '', ...stated, eventId: '', newEvent: false, ...extra };
  }
  // the same run recorded before: nothing new to record (its row is written if a crash lost it)
  const [known] = dated.recorded
    ? await deps.sql<{ run_id: string }[]>`
        select run_id from statement_runs where event_id = ${event.id} order by issued_at limit 1`
    : [];
  const { runId, appended } = known
    ? { runId: known.run_id, appended: false }
    : await recordRun(deps, {
        event,
        claims: written.claims,
        files: written.files,
        issuedAt: dated.issuedAt,
        subMerchantId: opts.subMerchantId ?? null,
        statements: ctx.statements,
      });
  deps.log.info('statements issued', {
    month: opts.month,
    position: cut.positionText,
    figuresSha256: ctx.figuresSha256,
    statements: ctx.statements,
    lines: written.lines,
    runId,
  });
  return { runId, ...stated, eventId: event.id, newEvent: appended, ...extra };
}

/*
 * In order (cut, figures, openings, payouts, header, files, record), each step using the values of the ones
 * before it.
 */
export async function issueStatements(deps: StatementDeps, opts: IssueOptions): Promise<IssueResult> {
  const cut = await cutOf(deps, opts);
  // a statement a workbook cannot state is left out, so that the others are issued (oversize.ts)
  const { month: m, refused } = await leaveOutOversized(await monthFigures(deps, opts, cut), opts.month);
  const p = await payoutsAndMeta(deps, opts, cut, m);
  const files = filesOf(opts, m.figures, cut.provisional);
  const run = await runEventOf(deps, opts, cut, m, p, files);
  // nothing changed since the month's latest run: that run again, at its cut (same numbers, dates and bytes)
  const same = opts.atPosition ? undefined : unchangedRun(run.runsOfMonth, run.event.data);
  if (same) return issueStatements(deps, { ...opts, atPosition: same.cut });
  const dated = await datedAndShown(deps, opts, cut, m, p.payouts, run, files);
  const written = await writeStatements(deps, opts, { cut, m, meta: p.meta, files, dated, run });
  // The index lists the whole month; a run for one sub-merchant does not overwrite it with a single row.
  if (files.indexName) {
    const index = path.join(opts.outDir, files.indexName);
    const meta = { ...p.meta, files: written.files.map((f) => f.name), issuedAt: dated.issuedAt };
    await writePayoutsWorkbook(index, m.figures, meta, dated.shown.indexOf);
    written.files.push(await describeFile(index));
  }
  const result = await recordedResult(deps, opts, {
    cut,
    m,
    figuresSha256: p.figuresSha256,
    previousMonthNotIssued: p.previousMonthNotIssued,
    dated,
    event: run.event,
    written,
    statements: files.bySubMerchant.size,
  });
  if (refused.length === 0) return result;
  deps.log.error('statements not issued', { month: opts.month, refused: refused.map((r) => r.subMerchantId) });
  return { ...result, refused };
}

export { fileSha256, type IssuedFile, runNote, type StatementRunRow, statementRuns } from './runs';

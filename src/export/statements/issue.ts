import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import path from 'node:path';
import { DateTime } from 'luxon';
import type { Sql } from '../../db/connect';
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
  writeStatementWorkbook,
  type StatementFigures,
  type StatementSource,
} from './workbooks';
import { issuedBefore, openAtPreviousStatements, previousRunOf, type IssuedRun } from './previous';
import { memoize } from '../../memoize';
import { type StatementsConfig, statementsConfigFromEnv } from '../../config/statements';
import { writeStatementPdf } from './pdf';
import { claimNumber, directoryAt, headerOf, issuedAtOf, type NumberClaim } from './header';
import { recordedHeld } from '../payouts/holds';
import { closingsPaidOut, paidLinesAt, paidSincePrevious, payoutFigures } from './payout-figures';
import { issuedPayouts, statementPayouts, withPaidOut } from './payouts';
import { ExportError } from '../errors';
import { statementLineDetails, storePaymentEvents, type PaymentEvents } from './details';
import { ledgerStatementQueries, type StatementQueries } from './queries';
import { checkMonthEnded, checkPositionWithinHead, monthBefore, runsInZone } from './controls';
import { notStatedMarked, previousOf, splitNotStated } from './not-stated';
import { correctionsAt, monthRuns, monthSettings, recordedSettings, shownPayouts, unchangedRun } from './corrections';
import type { StatementPayoutSection } from './figures';

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

export interface IssuedFile {
  readonly name: string;
  readonly path: string;
  readonly sha256: string;
  readonly bytes: number;
  /** absent for the Payouts index */
  readonly subMerchantId?: string;
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
}

export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function describeFile(file: string, subMerchantId?: string): Promise<IssuedFile> {
  return {
    name: path.basename(file),
    path: file,
    sha256: await fileSha256(file),
    bytes: statSync(file).size,
    ...(subMerchantId ? { subMerchantId } : {}),
  };
}

/** What one sub-merchant's statement is written from (the workbook and the PDF alike). */
async function statementSource(
  ctx: {
    queries: StatementQueries;
    base: { month: string; timezone: string; atPosition: Position };
    runs: readonly IssuedRun[];
    namesOf: (id: string) => Promise<readonly string[]>;
    timezone: string;
    /** the payments' recorded events, for each line's payment method and fee parts (absent: not shown) */
    paymentEvents?: PaymentEvents;
    linesPerDetailRead?: number;
  },
  subMerchantId: string,
  own: readonly StatementFigures[],
  payouts: readonly StatementPayoutSection[],
): Promise<StatementSource> {
  const { queries, base } = ctx;
  const reserve = await queries.reserve({ ...base, subMerchantId });
  const previous = previousRunOf(ctx.runs, subMerchantId, await ctx.namesOf(subMerchantId));
  const adjustments = queries.adjustments;
  // read once for the statement's three passes over its lines (Operations, Audit, PDF)
  const details = ctx.paymentEvents && statementLineDetails(ctx.paymentEvents, ctx.linesPerDetailRead);
  return {
    figures: own,
    lines: (currency) => {
      const lines = queries.lines({ ...base, subMerchantId, currency });
      return details ? details(lines, currency) : lines;
    },
    ...(previous && adjustments
      ? {
          adjustments: (currency: string) => {
            const entries = adjustments({ ...base, subMerchantId, currency, previous: previousOf(previous) });
            // only a statement with months never stated lists some of its entries apart
            const gap = own.some((f) => f.currency === currency && f.notStated !== undefined);
            return gap ? notStatedMarked(entries, previous, ctx.timezone) : entries;
          },
        }
      : {}),
    reserve,
    ...(payouts ? { payouts } : {}),
  };
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
      files: files.map(({ name, sha256, bytes }) => ({ name, sha256, bytes })),
      issuedAt: run.issuedAt.toISOString(),
    },
  };
  const appended = await deps.store.append(statementStream(d.month), [recordedEvent]);
  const runId = randomUUID();
  await deps.sql`
    insert into statement_runs (run_id, month, timezone, sub_merchant_id, position, figures_sha256, statements, files, event_id)
    values (${runId}, ${d.month}, ${deps.timezone}, ${run.subMerchantId}, ${d.position}, ${d.figuresSha256}, ${run.statements},
            ${deps.sql.json(files.map(({ name, sha256, bytes, subMerchantId }) => ({ name, sha256, bytes, ...(subMerchantId ? { subMerchantId } : {}) })) as never)}, ${event.id})`;
  return { runId, appended: appended.appended > 0 };
}

/*
 * One pass in order (cut, figures, openings, payouts, header, files, record), each step using the values of the
 * ones before it; what can stand alone is in the helpers above and the modules it calls.
 */
export async function issueStatements(deps: StatementDeps, opts: IssueOptions): Promise<IssueResult> {
  monthRange(opts.month, deps.timezone); // validates the month
  const provisional = checkMonthEnded(opts.month, deps.timezone, opts.now ?? new Date(), opts.provisional ?? false);
  if (opts.atPosition) await checkPositionWithinHead(deps.store, opts.atPosition);
  const queries = deps.queries ?? ledgerStatementQueries(deps.sql);
  const position = opts.atPosition ?? (await ledgerPosition(deps.sql));
  if (!position)
    throw new ExportError('EXPORT_NO_POSITION', 'the journal has not been built yet: run `recon project` first');
  const positionText = formatPosition(position);
  // injected queries (tests) stand without a journal to find the payments' streams in
  const paymentEvents = deps.queries ? undefined : storePaymentEvents(deps.sql, deps.store, position);
  const base = { month: opts.month, timezone: deps.timezone, atPosition: position };
  // what was paid out at the cut comes off the ledger's balances (docs/bank.md, "Payouts and holds")
  const paid = await payoutFigures(deps, position, { month: opts.month, timezone: deps.timezone });
  const ledger = withPaidOut(
    await queries.figures({
      ...base,
      ...(opts.subMerchantId ? { subMerchantId: opts.subMerchantId } : {}),
    }),
    paid.lines,
    opts.month,
    deps.timezone,
  );
  // opened at the statements issued before (previous-statements.ts); their figures as issued, once per run
  const zoned = runsInZone(
    await issuedBefore(deps.store, opts.month, null, position),
    deps.timezone,
    opts.rebaseTimezone ?? false,
  );
  const runs = zoned.runs;
  const previousMonth = monthBefore(opts.month);
  const previousMonthNotIssued = runs.some((r) => r.month === previousMonth) ? undefined : previousMonth;
  // what this run states per receiver name: recorded with it, for the next month to open at
  const closings = await closingsByReceiver(deps.sql, {
    month: opts.month,
    timezone: deps.timezone,
    atPosition: position,
    ...(opts.subMerchantId ? { names: await receiversOf(deps.sql, opts.subMerchantId, position) } : {}),
  });
  const namesOf = memoize((id: string) => receiversOf(deps.sql, id, position));
  await closingsPaidOut(closings, paid.lines, opts.month, deps.timezone, namesOf);
  const opened = await openAtPreviousStatements(ledger, runs, {
    closingsOf: memoize((run: IssuedRun) =>
      run.closings
        ? Promise.resolve(run.closings)
        : (async () =>
            closingsByReceiver(deps.sql, {
              month: run.month,
              timezone: run.timezone ?? deps.timezone,
              atPosition: run.cut,
              ...(run.subMerchantId ? { names: await receiversOf(deps.sql, run.subMerchantId, run.cut) } : {}),
            }))(),
    ),
    namesOf,
  });
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
      `no figures for sub-merchant ${opts.subMerchantId} in ${opts.month} at position ${positionText}`,
    );
  }
  const payouts = await statementPayouts(
    { store: deps.store, namesOf, recordedHeld: (h, name, currency) => recordedHeld(deps.sql, h, name, currency) },
    {
      month: opts.month,
      timezone: deps.timezone,
      cut: position,
      figures,
      runs,
      held: paid.held,
      paid: paid.lines,
      statuses: paid.statuses,
    },
  );
  const figuresSha256 = figuresDigest(opts.month, deps.timezone, figures);
  const meta = {
    month: opts.month,
    timezone: deps.timezone,
    position: positionText,
    figuresSha256,
    provisional,
    ...(zoned.rebasedFrom ? { rebasedFrom: zoned.rebasedFrom } : {}),
    ...(previousMonthNotIssued ? { previousMonthNotIssued } : {}),
  };

  const bySubMerchant = new Map<string, StatementFigures[]>();
  for (const f of figures) bySubMerchant.set(f.subMerchantId, [...(bySubMerchant.get(f.subMerchantId) ?? []), f]);
  const nameOf = (id: string) => bySubMerchant.get(id)![0]!.subMerchantName;
  checkStatementFileNames(
    [...bySubMerchant.keys()].map((id) => [id, nameOf(id)] as const),
    opts.month,
  );
  const fileOf = (id: string, ext: 'xlsx' | 'pdf') => statementFileName(id, opts.month, provisional, nameOf(id), ext);
  const indexName = opts.subMerchantId ? undefined : payoutsFileName(opts.month, provisional);
  const fileNames = [
    ...[...bySubMerchant.keys()].flatMap((id) => [fileOf(id, 'xlsx'), fileOf(id, 'pdf')]),
    ...(indexName ? [indexName] : []),
  ];
  // the month issued before: its first run's issuer and texts, its runs to reproduce or correct
  const runsOfMonth = provisional ? [] : await monthRuns(deps.store, opts.month, deps.timezone);
  const settings = monthSettings(runsOfMonth, deps.statements ?? statementsConfigFromEnv());
  // The run as it will be recorded: its id comes from its data, so a run already recorded (the same figures at
  // the same cut) is found, and its statements keep the number and the issue time they were given then.
  const event = newEvent(StatementIssued, {
    month: opts.month,
    timezone: deps.timezone,
    subMerchantId: opts.subMerchantId ?? null,
    position: positionText,
    figuresSha256,
    statements: bySubMerchant.size,
    files: fileNames,
    closings: [...closings]
      .map(([k, v]) => [...k.split('\u0000'), v.toString()] as [string, string, string])
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)),
    payouts: issuedPayouts(payouts),
    ...(settings.record ? { settings: recordedSettings(settings.config) } : {}),
  });
  // nothing changed since the month's latest run: that run again, at its cut (same numbers, dates and bytes)
  const same = opts.atPosition ? undefined : unchangedRun(runsOfMonth, event.data);
  if (same) return issueStatements(deps, { ...opts, atPosition: same.cut });
  const recorded = provisional
    ? undefined
    : (await deps.store.readStream(statementStream(opts.month))).find((e) => e.id === event.id);
  // a draft is dated when it is drawn up; an issued statement when its run was (or is now) recorded
  const issuedAt = recorded ? issuedAtOf(recorded) : (opts.now ?? new Date());
  const corrections = provisional ? undefined : await correctionsAt(deps.store, runsOfMonth, position);
  // the payouts deducted beyond the month's own are listed on the Paid out sheet with them
  const shown = await shownPayouts(
    payouts.map((p) => {
      const earlier = since.lines.filter((l) => l.subMerchantId === p.subMerchantId && l.currency === p.currency);
      return earlier.length > 0 ? { ...p, paid: [...earlier, ...p.paid] } : p;
    }),
    [...bySubMerchant.keys()],
    corrections,
  );
  const claims: NumberClaim[] = [];
  const files: IssuedFile[] = [];
  let lines = 0;
  let done = 0;
  for (const [subMerchantId, own] of bySubMerchant) {
    opts.signal?.throwIfAborted();
    const file = path.join(opts.outDir, fileOf(subMerchantId, 'xlsx'));
    const claim = provisional ? undefined : await claimNumber(deps.store, subMerchantId, opts.month, event.id);
    if (claim) claims.push(claim);
    const corrects = shown.statements.get(subMerchantId);
    const header = {
      ...headerOf(
        settings.config,
        await directoryAt(deps.store, subMerchantId, position),
        claim?.number ?? null,
        issuedAt,
      ),
      ...(corrects ? { corrects } : {}),
    };
    const source = await statementSource(
      {
        queries,
        base,
        runs,
        namesOf,
        timezone: deps.timezone,
        ...(paymentEvents ? { paymentEvents } : {}),
        ...(deps.linesPerDetailRead ? { linesPerDetailRead: deps.linesPerDetailRead } : {}),
      },
      subMerchantId,
      own,
      shown.sections.filter((p) => p.subMerchantId === subMerchantId),
    );
    const written = await writeStatementWorkbook(file, source, meta, header);
    lines += written.lines;
    files.push(await describeFile(file, subMerchantId));
    const pdf = path.join(opts.outDir, fileOf(subMerchantId, 'pdf'));
    await writeStatementPdf(pdf, source, meta, header);
    files.push(await describeFile(pdf, subMerchantId));
    opts.onProgress?.({ done: ++done, total: bySubMerchant.size, subMerchantId, lines });
  }
  // The index lists the whole month; a run for one sub-merchant does not overwrite it with a single row.
  if (indexName) {
    const index = path.join(opts.outDir, indexName);
    await writePayoutsWorkbook(index, figures, { ...meta, files: files.map((f) => f.name), issuedAt }, shown.indexOf);
    files.push(await describeFile(index));
  }

  const extra = {
    provisional,
    ...(recorded ? { reproduces: issuedAt } : {}),
    ...(corrections?.latest ? { corrects: corrections.latest.issuedAt } : {}),
    ...(previousMonthNotIssued ? { previousMonthNotIssued } : {}),
    ...(zoned.rebasedFrom ? { rebasedFrom: zoned.rebasedFrom } : {}),
  };
  // a draft is never recorded: it is not what was issued, and never a later month's opening
  if (provisional) {
    deps.log.info('provisional statements written (not recorded as issued)', { month: opts.month, lines });
    return {
      runId: '',
      month: opts.month,
      timezone: deps.timezone,
      position: positionText,
      figuresSha256,
      figures,
      statements: bySubMerchant.size,
      lines,
      files,
      eventId: '',
      newEvent: false,
      ...extra,
    };
  }
  // the same run recorded before: nothing new to record (its row is written if a crash lost it)
  const [known] = recorded
    ? await deps.sql<{ run_id: string }[]>`
        select run_id from statement_runs where event_id = ${event.id} order by issued_at limit 1`
    : [];
  const { runId, appended } = known
    ? { runId: known.run_id, appended: false }
    : await recordRun(deps, {
        event,
        claims,
        files,
        issuedAt,
        subMerchantId: opts.subMerchantId ?? null,
        statements: bySubMerchant.size,
      });
  deps.log.info('statements issued', {
    month: opts.month,
    position: positionText,
    figuresSha256,
    statements: bySubMerchant.size,
    lines,
    runId,
  });
  return {
    runId,
    month: opts.month,
    timezone: deps.timezone,
    position: positionText,
    figuresSha256,
    figures,
    statements: bySubMerchant.size,
    lines,
    files,
    eventId: event.id,
    newEvent: appended,
    ...extra,
  };
}

/** What a run was, in a line for whoever issued it: a month reproduced unchanged, or a correction. */
export function runNote(r: IssueResult): string | undefined {
  const day = (d: Date) => DateTime.fromJSDate(d, { zone: r.timezone }).toISODate();
  if (r.reproduces)
    return `unchanged since the statements issued on ${day(r.reproduces)} (cut at position ${r.position}): the same statements written again, nothing recorded`;
  if (r.corrects)
    return `a correction of the statements issued on ${day(r.corrects)}: each names the statement it corrects and asks only what that one did not`;
  return undefined;
}

export interface StatementRunRow {
  readonly runId: string;
  readonly month: string;
  readonly timezone: string;
  readonly subMerchantId: string | null;
  readonly position: string;
  readonly figuresSha256: string;
  readonly statements: number;
  readonly files: ReadonlyArray<{ name: string; sha256: string; bytes: number; subMerchantId?: string }>;
  readonly eventId: string | null;
  readonly issuedAt: Date;
}

export async function statementRuns(
  sql: Sql,
  opts: { month?: string; limit?: number } = {},
): Promise<StatementRunRow[]> {
  const rows = await sql<
    {
      run_id: string;
      month: string;
      timezone: string;
      sub_merchant_id: string | null;
      position: string;
      figures_sha256: string;
      statements: number;
      files: StatementRunRow['files'];
      event_id: string | null;
      issued_at: Date;
    }[]
  >`
    select run_id, month, timezone, sub_merchant_id, position, figures_sha256, statements, files, event_id, issued_at from statement_runs
    ${opts.month ? sql`where month = ${opts.month}` : sql``} order by issued_at desc limit ${opts.limit ?? 50}`;
  return rows.map((r) => ({
    runId: r.run_id,
    month: r.month,
    timezone: r.timezone,
    subMerchantId: r.sub_merchant_id,
    position: r.position,
    figuresSha256: r.figures_sha256,
    statements: r.statements,
    files: r.files,
    eventId: r.event_id,
    issuedAt: r.issued_at,
  }));
}

import type { Position } from '../../store/types';
import { statementLineDetails, type PaymentEvents } from './details';
import { notStatedMarked, previousOf } from './not-stated';
import { writeStatementPdf } from './pdf';
import { writeAuditWorkbook } from './audit';
import { linesReadOnce } from './lines-read-once';
import { readAhead } from './read-ahead';
import type { IssuedRun } from './previous';
import type { StatementQueries } from './queries';
import { describeFile, type IssuedFile } from './runs';
import type { StatementPayoutSection } from './figures';
import {
  type ReserveScheduleRow,
  type StatementFigures,
  type StatementHeader,
  type StatementMeta,
  type StatementSource,
  writeStatementWorkbook,
} from './workbooks';

/**
 * One sub-merchant's statement as plain data: everything it is written from but its lines and adjustments,
 * which are read while it is written. The run (issue.ts) draws it up; it is written in the run's thread or
 * handed to a worker thread (statement-pool.ts), which reads the lines through a connection of its own.
 */
export interface StatementJob {
  readonly subMerchantId: string;
  /** one row per currency */
  readonly figures: readonly StatementFigures[];
  readonly payouts: readonly StatementPayoutSection[];
  readonly reserve: readonly ReserveScheduleRow[];
  /** the statement this one builds on: its adjustments are the entries since */
  readonly previous?: IssuedRun;
  /** the run's cut: the month and the position the lines are read at */
  readonly base: { readonly month: string; readonly timezone: string; readonly atPosition: Position };
  readonly meta: StatementMeta;
  readonly header: StatementHeader;
  /** where the workbook, the PDF and finance's audit file go (each written under a temporary name, then renamed) */
  readonly xlsx: string;
  readonly pdf: string;
  readonly audit: string;
}

/** What a statement's lines are read through (the run's own, or a worker's). */
export interface StatementReads {
  readonly queries: StatementQueries;
  /** the payments' recorded events, for each line's payment method and fee parts (absent: not shown) */
  readonly paymentEvents?: PaymentEvents;
  /** lines whose payments' events are read together (details.ts; tests make it small) */
  readonly linesPerDetailRead?: number;
}

export interface WrittenStatementFiles {
  readonly lines: number;
  /** the workbook, the PDF, then finance's audit file */
  readonly files: readonly IssuedFile[];
}

// lines read ahead of the writer: two batches of their payments' details (details.ts)
const LINES_AHEAD = 2000;

/** What one sub-merchant's statement is written from (the workbook and the PDF alike). */
export function statementSource(job: StatementJob, reads: StatementReads): StatementSource {
  const { queries } = reads;
  const { base, subMerchantId, previous } = job;
  const adjustments = queries.adjustments;
  // read once for the statement's three passes over its lines (Operations, the audit file, PDF)
  const details = reads.paymentEvents && statementLineDetails(reads.paymentEvents, reads.linesPerDetailRead);
  return {
    figures: job.figures,
    lines: (currency) => {
      const lines = queries.lines({ ...base, subMerchantId, currency });
      return details ? readAhead(lines, LINES_AHEAD, details(currency)) : readAhead(lines, LINES_AHEAD);
    },
    ...(previous && adjustments
      ? {
          adjustments: (currency: string) => {
            const entries = adjustments({ ...base, subMerchantId, currency, previous: previousOf(previous) });
            // only a statement with months never stated lists some of its entries apart
            const gap = job.figures.some((f) => f.currency === currency && f.notStated !== undefined);
            return gap ? notStatedMarked(entries, previous, base.timezone) : entries;
          },
        }
      : {}),
    reserve: job.reserve,
    payouts: job.payouts,
  };
}

/**
 * The workbook and the PDF of one sub-merchant, written at once, then finance's audit file: the workbook's
 * Operations sheet and the PDF's operations table take each line from one read (lines-read-once.ts); the audit
 * file, written once the workbook is, reads them a second time (as its sheet did inside the workbook). The PDF
 * is kept only once the workbook and the audit file are, and the workbook's (or the audit file's) error is the
 * one thrown when both fail. Their names, hashes and sizes as the run records them.
 */
export async function writeStatementFiles(job: StatementJob, reads: StatementReads): Promise<WrittenStatementFiles> {
  const source = statementSource(job, reads);
  const [forWorkbook, forPdf] = linesReadOnce(source.lines, LINES_AHEAD);
  const workbook = writeStatementWorkbook(job.xlsx, { ...source, lines: forWorkbook.lines }, job.meta, job.header);
  const written = workbook
    .finally(() => forWorkbook.close())
    .then(async (w) => {
      await writeAuditWorkbook(job.audit, source, job.meta, job.header);
      return w;
    });
  const pdf = writeStatementPdf(job.pdf, { ...source, lines: forPdf.lines }, job.meta, job.header, {
    beforeRename: () => written,
  }).finally(() => forPdf.close());
  const [w, p] = await Promise.allSettled([written, pdf]);
  if (w.status === 'rejected') throw w.reason;
  if (p.status === 'rejected') throw p.reason;
  return {
    lines: w.value.lines,
    files: [
      await describeFile(job.xlsx, job.subMerchantId),
      await describeFile(job.pdf, job.subMerchantId),
      await describeFile(job.audit, job.subMerchantId, { financeOnly: true }),
    ],
  };
}

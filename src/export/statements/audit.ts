import { formatMinor } from '../../money';
import type {
  AdjustmentLine,
  StatementFigures,
  StatementHeader,
  StatementLine,
  StatementMeta,
  StatementSource,
} from './figures';
import { periodText, sheetName } from './figures';
import { statementTitle } from './workbooks';
import {
  addTableSheet,
  closeTable,
  createLocalTime,
  DATE_TIME_FORMAT,
  drainSheet,
  safeText,
  type TableSheet,
  writeAlignedRow,
  openWorkbook,
  writeRow,
  type Workbook,
} from '../workbook/xlsx';

/**
 * The Audit sheet: what the statement was computed from (the event-store position of the cut, the figures'
 * sha-256, the run) and the recorded events behind every line, so that a figure can be traced. Finance's alone:
 * it is a file of its own beside the statement (`<id>-<slug>-<month>-audit.xlsx`), since the statement's
 * workbook is e-mailed to the sub-merchant and internal ids and positions must not leave the company.
 */

const ROWS_PER_YIELD = 2000;

/** Finance's audit file of one statement: its Audit sheet, the lines read again (a read of its own). */
export async function writeAuditWorkbook(
  file: string,
  src: Pick<StatementSource, 'figures' | 'lines' | 'adjustments' | 'payouts'>,
  meta: StatementMeta,
  header: StatementHeader,
): Promise<void> {
  // in the statement's order of currencies, so that each line sits where finance finds it on the statement
  const figures = [...src.figures].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
  const title = `${statementTitle(figures, meta, header)} — Audit`;
  const pending = openWorkbook(file, { title, created: header.issuedAt });
  try {
    await writeAuditSheet(pending.workbook, {
      figures,
      meta,
      header,
      lines: src.lines,
      ...(src.adjustments ? { adjustments: src.adjustments } : {}),
      holds: (src.payouts ?? []).flatMap((p) => p.holds),
      title,
    });
    await pending.commit();
  } catch (e) {
    await pending.abort();
    throw e;
  }
}

export async function writeAuditSheet(
  wb: Workbook,
  o: {
    figures: readonly StatementFigures[];
    meta: StatementMeta;
    header: StatementHeader;
    lines(currency: string): AsyncIterable<StatementLine>;
    adjustments?(currency: string): AsyncIterable<AdjustmentLine>;
    /** the held items: the discrepancy each waits for, by id (the statement's own pages name them in words) */
    holds?: ReadonlyArray<{ discrepancyId: string; paymentId?: string | null; currency: string; amount: bigint }>;
    title: string;
  },
): Promise<void> {
  const { meta } = o;
  const t = addTableSheet(
    wb,
    sheetName(meta, 'Audit'),
    [
      { header: 'Fact or line', width: 30 },
      { header: `Dated (${meta.timezone})`, width: 20, numFmt: DATE_TIME_FORMAT },
      { header: 'Currency', width: 10 },
      { header: 'Payment', width: 38 },
      { header: 'Value or event ids', width: 80 },
    ],
    { title: o.title, pageOf: 'Page &P of &N' },
  );
  const facts: Array<[string, string]> = [
    ['Period', periodText(meta)],
    ['Cut at event-store position', meta.position],
    ['Figures sha-256', meta.figuresSha256],
    ['Statement number', o.header.number ?? '(draft: none)'],
    ['Issued at (UTC, recorded with the run)', o.header.issuedAt.toISOString()],
    ...(meta.rebasedFrom ? ([['Re-based from time zone', meta.rebasedFrom]] as Array<[string, string]>) : []),
  ];
  for (const [k, v] of facts) writeRow(t, [k, '', '', '', v]);
  const localTime = createLocalTime(meta.timezone);
  let n = 0;
  for (const f of o.figures) {
    for await (const l of o.lines(f.currency)) {
      writeDated(t, ['Operation', localTime(l.at), f.currency, safeText(l.paymentId), l.eventIds.join(' ')]);
      if (++n % ROWS_PER_YIELD === 0) await drainSheet(t.sheet);
    }
    if (o.adjustments && f.previousStatement !== undefined)
      for await (const a of o.adjustments(f.currency)) {
        writeDated(t, [
          a.notStated ? 'Not stated before' : 'Adjustment',
          localTime(a.at),
          f.currency,
          safeText(a.paymentId),
          a.eventIds.join(' '),
        ]);
        if (++n % ROWS_PER_YIELD === 0) await drainSheet(t.sheet);
      }
  }
  for (const h of o.holds ?? [])
    writeRow(t, [
      'Held for discrepancy',
      '',
      h.currency,
      safeText(h.paymentId ?? ''),
      // the amount as money (the bigint is hundredths: 118152 read as a figure is a hundred times the money held)
      `${h.discrepancyId || '(receiver not registered)'}: ${formatMinor(h.amount)} ${h.currency}`,
    ]);
  closeTable(t);
}

// a date is right-aligned by default and would print against the currency beside it
const DATE_ALIGNMENT = { horizontal: 'left' } as const;
function writeDated(t: TableSheet, values: readonly unknown[]): void {
  writeAlignedRow(t, values, { column: 2, alignment: DATE_ALIGNMENT });
}

import type { Sql } from '../../db/connect';
import {
  DECISION_CHOICES,
  DECISION_COLUMNS,
  DECISION_INFO_COLUMNS,
  DECISION_SEEN_COLUMNS,
  DECISIONS_SHEET,
} from '../../exceptions/decisions-layout';
import { listExceptions } from '../../exceptions/queries';
import { DEFAULT_EXCEPTION_POLICY, type ExceptionPolicy } from '../../exceptions/severity';
import { DATE_TIME_FORMAT, moneyFormat, type Workbook } from '../workbook/xlsx';
import {
  closeNightlySheet,
  contentWidths,
  type NightlyCell,
  type NightlyColumn,
  nightlyMoney,
  openNightlySheet,
  writeCells,
} from './table';

/**
 * The Decisions sheet of the nightly workbook (docs/exceptions.md, "Offline decisions"): every exception still
 * to be worked, one row each, with empty columns to fill in and `recon exceptions import` to read back. Its
 * work (state, assignee) is as it stands when the report is written; severity and age are as at the report's
 * day end, so the same day written twice over the same work is the same sheet.
 */

export interface DecisionRow {
  readonly id: string;
  readonly leg: string;
  readonly type: string;
  readonly state: string;
  readonly severity: string;
  readonly dueAt: Date | null;
  readonly assignee: string | null;
  readonly subMerchants: string;
  readonly currency: string | null;
  readonly amountInDoubt: bigint | null;
  readonly whatDiffers: string;
  /** the proposal waiting, the decision in force (their ids): what an approve or reopen row is held to */
  readonly proposal: string | null;
  readonly acceptance: string | null;
}

/** The states with work left: not accepted, not resolved by the sources or by hand. */
const TO_WORK: ReadonlySet<string> = new Set(['open', 'assigned', 'pending_approval', 'reopened']);

/**
 * The exceptions with work left, oldest operation first; none when the exceptions were never projected. An
 * accepted one is work again when more is in doubt than it was accepted on (its why says so, state.ts): reopen it.
 */
export async function decisionRows(
  sql: Sql,
  asAt: Date,
  policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY,
): Promise<DecisionRow[]> {
  // what is to work or was decided: never a discrepancy the sources resolved, left out by the query
  const { items } = await listExceptions(sql, { standing: true }, asAt, policy);
  return items
    .filter((x) => TO_WORK.has(x.state) || (x.state === 'accepted' && x.why !== null))
    .map((x) => ({
      id: x.id,
      leg: x.leg,
      type: x.type,
      state: x.state,
      severity: x.severity,
      dueAt: x.dueAt === null ? null : new Date(x.dueAt),
      assignee: x.assignee,
      subMerchants: x.subMerchantIds.join(', '),
      currency: x.currency,
      amountInDoubt: x.amountInDoubt === null ? null : BigInt(x.amountInDoubt),
      whatDiffers: x.whatDiffers,
      proposal: x.pending?.id ?? null,
      acceptance: x.acceptance,
    }));
}

const FILL_IN: readonly NightlyColumn[] = DECISION_COLUMNS.map((header) =>
  header === 'id' ? { header, maxWidth: 38 } : header === 'note' ? { header, maxWidth: 50 } : { header },
);

function infoColumns(timezone: string): NightlyColumn[] {
  return DECISION_INFO_COLUMNS.map((header) => {
    if (header === 'due_at') return { header: `due_at (${timezone})`, kind: 'datetime', numFmt: DATE_TIME_FORMAT };
    if (header === 'amount_in_doubt') return { header, kind: 'money' };
    if (header === 'what_differs') return { header, maxWidth: 70 };
    return { header };
  });
}

// exact text the import reads back: the shown amount is a money cell (a float) a person may edit
const SEEN: readonly NightlyColumn[] = DECISION_SEEN_COLUMNS.map((header) => ({ header, hidden: true }));

function cellsOf(r: DecisionRow, local: (d: Date) => Date): NightlyCell[] {
  const blanks = DECISION_COLUMNS.slice(1).map(() => null);
  const amount = r.amountInDoubt !== null && r.currency ? nightlyMoney(r.amountInDoubt, r.currency) : null;
  return [
    r.id,
    ...blanks,
    r.leg,
    r.type,
    r.state,
    r.severity,
    r.dueAt ? local(r.dueAt) : null,
    r.assignee,
    r.subMerchants,
    r.currency,
    amount,
    r.whatDiffers,
    r.amountInDoubt === null ? null : r.amountInDoubt.toString(),
    r.currency,
    r.proposal,
    r.acceptance,
  ];
}

const letter = (n: number) => String.fromCharCode(64 + n);

/** Writes the sheet: the fill-in columns first (drop-downs where a column takes a list), then what each one is. */
export function writeDecisionsSheet(
  wb: Workbook,
  documentName: string,
  rows: readonly DecisionRow[],
  timezone: string,
  local: (d: Date) => Date,
): void {
  const columns = [...FILL_IN, ...infoColumns(timezone), ...SEEN];
  const cells = rows.map((r) => cellsOf(r, local));
  const t = openNightlySheet(wb, documentName, DECISIONS_SHEET, columns, contentWidths(columns, cells));
  for (const c of cells) writeCells(t, c, { moneyFormat });
  const last = rows.length + 1;
  if (rows.length > 0)
    DECISION_COLUMNS.forEach((name, i) => {
      const choices = DECISION_CHOICES[name];
      if (!choices) return;
      const col = letter(i + 1);
      (t.sheet as unknown as DataValidating).dataValidations.add(`${col}2:${col}${last}`, {
        type: 'list',
        allowBlank: true,
        formulae: [`"${choices.join(',')}"`],
        showErrorMessage: true,
        errorTitle: name,
        error: `${name}: one of ${choices.join(', ')}`,
      });
    });
  closeNightlySheet(t, [], moneyFormat);
}

/** exceljs's streaming sheet has data validations; its typings leave them out. */
interface DataValidating {
  dataValidations: { add(range: string, rule: Record<string, unknown>): void };
}

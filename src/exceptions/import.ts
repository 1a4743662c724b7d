import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { checkText, FREE_TEXT } from '../input-rules';
import type { Person } from '../people/directory';
import { ACTION_REQUESTS, type ActionName, type ActionRequest } from './actions';
import { applyDecisionRows, type RowProblem } from './bulk';
import type { ExceptionDeps } from './context';
import {
  DECISION_COLUMNS,
  DECISION_INFO_COLUMNS,
  DECISION_SEEN_COLUMNS,
  DECISIONS_SHEET,
  type DecisionColumn,
  type DecisionSeenColumn,
} from './decisions-layout';

/**
 * The offline decisions (docs/exceptions.md, "Offline decisions"): a workbook's `Decisions` sheet, filled in
 * and imported back with `recon exceptions import FILE [--dry-run]`. Its first row names the columns
 * (any order, case ignored): `id`, `action`, and what the action takes — `assignee`, `due`, `reason_code`,
 * `decision`, `note` (the reason of every action: the comment's text, the reopening's reason). A row whose
 * action is empty is passed by (a sheet listing every exception may be filled in for some). Every row is
 * checked, then planned against the store; one refused row refuses the file, every problem named by sheet,
 * row and column, and nothing is written.
 */

export { DECISIONS_SHEET } from './decisions-layout';
const COLUMNS = DECISION_COLUMNS;
const READ: readonly string[] = [...DECISION_COLUMNS, ...DECISION_SEEN_COLUMNS];
type Column = DecisionColumn | DecisionSeenColumn;

/** exceljs, loaded when a sheet is read: not at every start of the command line. */
let exceljs: typeof ExcelJS | undefined;
const excel = (): typeof ExcelJS => (exceljs ??= createRequire(import.meta.url)('exceljs') as typeof ExcelJS);

/** Where a problem is: `Decisions!C7 (action)`. */
export interface SheetProblem {
  readonly sheet: string;
  readonly row: number;
  readonly column: string | null;
  readonly message: string;
}

export const sheetProblemText = (p: SheetProblem) =>
  p.row === 0
    ? `${p.sheet}: ${p.message}`
    : `${p.sheet}!${p.column === null ? `row ${p.row}` : `${p.column}${p.row}`}: ${p.message}`;

const letter = (n: number): string =>
  n <= 26 ? String.fromCharCode(64 + n) : letter(Math.floor((n - 1) / 26)) + letter(((n - 1) % 26) + 1);

/** A cell as text (a formula's result, a rich text's plain text, a date as an ISO instant). */
function cellText(v: ExcelJS.CellValue): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') {
    if ('richText' in v) return v.richText.map((r) => r.text).join('');
    if ('result' in v) return cellText(v.result as ExcelJS.CellValue);
    if ('text' in v) return String(v.text);
    return '';
  }
  return String(v);
}

/**
 * A `due` cell Excel holds as a date: the wall-clock time it shows, in the business time zone, as the sheet's
 * `due_at (zone)` column writes it (exceljs gives a cell's date and time as the UTC fields of a Date). A time
 * the zone skips (clocks moved forward) is refused: it is no instant.
 */
function dueOfDate(v: Date, timezone: string): { ok: true; value: string } | { ok: false; reason: string } {
  const wall = DateTime.fromJSDate(v, { zone: 'UTC' });
  const fields = wall.toObject();
  const local = DateTime.fromObject(fields, { zone: timezone });
  if (!local.isValid || local.toFormat('yyyy-MM-dd HH:mm:ss') !== wall.toFormat('yyyy-MM-dd HH:mm:ss'))
    return {
      ok: false,
      reason: `${wall.toFormat('yyyy-MM-dd HH:mm')} does not exist in ${timezone} (the clocks skip it)`,
    };
  return { ok: true, value: local.toUTC().toISO()! };
}

/** The date a cell holds, a formula's result included; null when it holds none. */
function dateOf(v: ExcelJS.CellValue): Date | null {
  if (v instanceof Date) return v;
  if (v !== null && typeof v === 'object' && 'result' in v) return dateOf(v.result as ExcelJS.CellValue);
  return null;
}

/**
 * The header's columns (column number of each name), or the problem of the header; `shows`: whether the sheet
 * shows what the exception is (the nightly sheet's descriptive columns), so its person decided on what it showed.
 */
function headerOf(ws: ExcelJS.Worksheet): { at: Map<Column, number>; shows: boolean; problems: SheetProblem[] } {
  const at = new Map<Column, number>();
  const problems: SheetProblem[] = [];
  let shows = false;
  ws.getRow(1).eachCell((cell, n) => {
    const name = cellText(cell.value).trim().toLowerCase().replace(/\s+/g, '_');
    const first = at.get(name as Column);
    // a column named twice is not guessed at (the last had been read, the other passed by)
    if (first !== undefined)
      problems.push({
        sheet: ws.name,
        row: 1,
        column: letter(n),
        message: `column ${name} again (first in ${letter(first)}); name it once`,
      });
    else if (READ.includes(name)) at.set(name as Column, n);
    // an informative column may name its unit or zone after it: `due_at (Europe/Kyiv)`
    else if ((DECISION_INFO_COLUMNS as readonly string[]).includes(name.replace(/_\(.*\)$/, ''))) shows = true;
    else if (name !== '')
      problems.push({
        sheet: ws.name,
        row: 1,
        column: letter(n),
        message: `unknown column ${JSON.stringify(name.slice(0, 40))}; expected ${COLUMNS.join(', ')} (or the nightly sheet's ${DECISION_INFO_COLUMNS.join(', ')})`,
      });
  });
  for (const c of ['id', 'action'] as const)
    if (!at.has(c)) problems.push({ sheet: ws.name, row: 1, column: null, message: `no column ${c}` });
  return { at, shows, problems };
}

/** What each decision row is held to: the columns saying what it showed (decisions-layout.ts). */
const SEEN_BY_ACTION: Partial<Record<ActionName, readonly DecisionSeenColumn[]>> = {
  accept: ['seen_amount_in_doubt', 'seen_currency'],
  resolve: ['seen_amount_in_doubt', 'seen_currency'],
  approve: ['seen_proposal'],
  reject: ['seen_proposal'],
  reopen: ['seen_acceptance'],
};

/**
 * A decision row of a sheet that showed the exception (a nightly report's) but not what the row showed, exactly:
 * one written before the sheet kept it. Its person decided on what it showed, which cannot be checked, so it is
 * refused rather than taken on the exception as it stands a day later. A sheet made by hand shows nothing.
 */
function unboundProblem(action: ActionName, has: (c: Column) => boolean): string | null {
  const missing = (SEEN_BY_ACTION[action] ?? []).find((c) => !has(c));
  if (missing === undefined) return null;
  // the sheet may be an older nightly report's or one made by hand with descriptive columns: advice for both
  return `${action}: the sheet has no column ${missing} (what the row showed) though it shows the exception, so its decision would be taken on the exception as it is now; write the report again (recon report nightly) and fill it in anew, or add the column ${missing} with what the row was decided on`;
}

/**
 * What the row showed, where the sheet says (the nightly one's hidden `seen_…` columns): its decision is held to
 * that, not to the exception as it stands at the import a day later. A sheet without them (one made by hand)
 * says nothing of what its person saw.
 */
function seenOf(action: ActionName, f: (c: Column) => string | undefined, has: (c: Column) => boolean) {
  if ((action === 'accept' || action === 'resolve') && (has('seen_amount_in_doubt') || has('seen_currency')))
    return { seen: { amountInDoubt: f('seen_amount_in_doubt') ?? null, currency: f('seen_currency') ?? null } };
  // none shown: a proposal waiting by now is not the one shown
  if ((action === 'approve' || action === 'reject') && has('seen_proposal'))
    return { proposal: f('seen_proposal') ?? '' };
  if (action === 'reopen' && has('seen_acceptance')) return { acceptance: f('seen_acceptance') ?? null };
  return {};
}

/** The row's request: the action and its fields as the actions take them. */
function requestOf(
  action: ActionName,
  id: string,
  f: (c: Column) => string | undefined,
  has: (c: Column) => boolean,
): ActionRequest {
  const note = f('note') ?? '';
  const opt = <K extends string>(key: K, c: Column) =>
    f(c) === undefined ? {} : ({ [key]: f(c) } as Record<K, string>);
  const seen = seenOf(action, f, has);
  switch (action) {
    case 'assign':
      return { action, id, assignee: f('assignee') ?? '', ...opt('dueAt', 'due'), ...(note ? { note } : {}) };
    case 'comment':
      return { action, id, text: note };
    case 'resolve':
      return { action, id, reasonCode: f('reason_code') ?? '', note, ...seen };
    case 'accept':
      return { action, id, note, ...opt('decision', 'decision'), ...seen };
    case 'reopen':
      return { action, id, reason: note, ...seen };
    default:
      return { action, id, note, ...seen };
  }
}

/** Reads the sheet's rows to requests; problems of the file itself (sheet, header, cells) named by place. */
export async function readDecisionsSheet(
  file: Buffer | ArrayBuffer,
  timezone = 'UTC',
): Promise<{
  rows: Array<{ row: number; request: ActionRequest }>;
  at: Map<string, number>;
  problems: SheetProblem[];
}> {
  const wb = new (excel().Workbook)();
  try {
    await wb.xlsx.load(file as ArrayBuffer);
  } catch {
    return {
      rows: [],
      at: new Map(),
      problems: [{ sheet: DECISIONS_SHEET, row: 0, column: null, message: 'not an .xlsx workbook' }],
    };
  }
  const ws = wb.getWorksheet(DECISIONS_SHEET);
  if (!ws)
    return {
      rows: [],
      at: new Map(),
      problems: [{ sheet: DECISIONS_SHEET, row: 0, column: null, message: `no sheet named ${DECISIONS_SHEET}` }],
    };
  const { at, shows, problems } = headerOf(ws);
  const rows: Array<{ row: number; request: ActionRequest }> = [];
  if (problems.length) return { rows, at, problems };
  ws.eachRow((r, n) => {
    if (n === 1) return;
    const bad = (c: Column, message: string) =>
      problems.push({ sheet: ws.name, row: n, column: letter(at.get(c) ?? 0), message: `${c}: ${message}` });
    const read = new Map<Column, string | undefined>();
    const f = (c: Column): string | undefined => {
      if (read.has(c)) return read.get(c);
      const col = at.get(c);
      const value = col === undefined ? null : r.getCell(col).value;
      const date = c === 'due' ? dateOf(value) : null;
      const due = date === null ? null : dueOfDate(date, timezone);
      if (due && !due.ok) bad(c, due.reason);
      const t = due ? (due.ok ? due.value : '') : cellText(value).trim();
      read.set(c, t === '' ? undefined : t);
      return read.get(c);
    };
    const action = f('action');
    if (action === undefined) return;
    for (const c of READ as readonly Column[]) {
      const t = f(c);
      const checked = t === undefined ? null : checkText(t, { ...FREE_TEXT, maxLength: 4000 });
      if (checked && !checked.ok) bad(c, checked.reason);
    }
    if (!(ACTION_REQUESTS as readonly string[]).includes(action))
      return void bad('action', `expected one of ${ACTION_REQUESTS.join(', ')}`);
    const id = f('id');
    if (id === undefined) return void bad('id', 'required');
    const unbound = shows ? unboundProblem(action as ActionName, (c) => at.has(c)) : null;
    if (unbound !== null)
      return void problems.push({ sheet: ws.name, row: n, column: letter(at.get('action')!), message: unbound });
    rows.push({ row: n, request: requestOf(action as ActionName, id, f, (c) => at.has(c)) });
  });
  return { rows, at, problems };
}

/** The actions' field names to the sheet's columns, to place a planning problem. */
const COLUMN_OF: Record<string, Column> = {
  id: 'id',
  assignee: 'assignee',
  due: 'due',
  'reason-code': 'reason_code',
  decision: 'decision',
  note: 'note',
  text: 'note',
  reason: 'note',
  // what the row showed (the nightly sheet's hidden columns), no longer what the exception is
  amount_in_doubt: 'seen_amount_in_doubt',
  currency: 'seen_currency',
  proposal: 'seen_proposal',
  acceptance: 'seen_acceptance',
};

/**
 * Imports a Decisions sheet all or nothing: the file's problems and then every row's planning problems,
 * or (none) the changes made — or, with `dryRun`, those that would be.
 */
export async function importDecisions(
  deps: ExceptionDeps,
  actor: Person,
  file: Buffer | ArrayBuffer,
  opts: {
    dryRun: boolean /** the business time zone, in which a date cell is read (default UTC) */;
    timezone?: string;
  },
): Promise<
  { ok: true; changes: Array<{ row: number; id: string; summary: string }> } | { ok: false; problems: SheetProblem[] }
> {
  const read = await readDecisionsSheet(file, opts.timezone);
  if (read.problems.length) return { ok: false, problems: read.problems };
  const sheet = createHash('sha256')
    .update(Buffer.isBuffer(file) ? file : Buffer.from(file))
    .digest('hex');
  const r = await applyDecisionRows(deps, actor, read.rows, { ...opts, sheet });
  if (r.ok) return r;
  const place = (p: RowProblem): SheetProblem => {
    const c = p.field === null ? undefined : COLUMN_OF[p.field];
    const n = c === undefined ? undefined : read.at.get(c);
    return { sheet: DECISIONS_SHEET, row: p.row, column: n === undefined ? null : letter(n), message: p.message };
  };
  return { ok: false, problems: r.problems.map(place) };
}

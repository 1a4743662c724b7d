import { defuseFormula } from '../formula-guard';
import { amountInDoubt, discrepancyAmount, moneyText, whatDiffers } from './discrepancy-summary';
import type { DiscrepancyRecord } from './discrepancy-types';

/**
 * How discrepancies are listed for people (`recon discrepancies`, the nightly report's CSV, the API's JSON):
 * the order, the CSV and the table, each in pieces a row at a time, so that a list read in batches
 * (discrepancy-stream.ts) prints the same bytes as one read whole.
 */

/** Every sub-merchant a discrepancy touches (all of an operation's receivers, not only one). */
export function subMerchantsOf(d: Pick<DiscrepancyRecord, 'sub_merchant_id' | 'sub_merchant_ids'>): string[] {
  const ids = new Set(d.sub_merchant_ids ?? []);
  if (d.sub_merchant_id) ids.add(d.sub_merchant_id);
  return [...ids].sort();
}

/**
 * The JSON form printed by `recon discrepancies --format json` and served by the API; `amount_in_doubt` (minor
 * units, null: none) is what `recon discrepancies accept --amount-in-doubt` names as seen.
 */
export function discrepancyJson(d: DiscrepancyRecord): Record<string, unknown> {
  const inDoubt = amountInDoubt(d);
  return {
    ...d,
    sub_merchant_ids: subMerchantsOf(d),
    what_differs: whatDiffers(d),
    amount_in_doubt: inDoubt === null ? null : inDoubt.toString(),
  };
}

/** A CSV cell, quoted, and defused against formula injection (src/formula-guard.ts). */
export function csvCell(value: unknown): string {
  let text =
    value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  text = defuseFormula(text);
  return /[",\r\n']/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

export const CSV_COLUMNS = [
  'id',
  'type',
  'status',
  'pos_id',
  'order_id',
  'payment_id',
  'method',
  'receiver_name',
  'sub_merchant_id',
  'currency',
  'occurred_at',
  'detected_at',
  'resolved_at',
  'resolved_by_event',
  'accepted_at',
  'accepted_by',
  'accepted_note',
  'values',
  'evidence',
  'sub_merchant_ids',
  'what_differs',
] as const;

/** The CSV's header line, with its CRLF. */
export const CSV_HEADER = `${CSV_COLUMNS.join(',')}\r\n`;

/** One discrepancy's CSV line, with its CRLF. */
export function csvLineOf(r: DiscrepancyRecord): string {
  const cells = CSV_COLUMNS.map((c) =>
    csvCell(
      c === 'evidence'
        ? r.evidence.join(' ')
        : c === 'sub_merchant_ids'
          ? subMerchantsOf(r).join(' ')
          : c === 'what_differs'
            ? whatDiffers(r)
            : (r as unknown as Record<string, unknown>)[c],
    ),
  );
  return `${cells.join(',')}\r\n`;
}

export function discrepanciesCsv(rows: readonly DiscrepancyRecord[]): string {
  return CSV_HEADER + rows.map(csvLineOf).join('');
}

export type DiscrepancySort = 'amount' | 'age';
export const DISCREPANCY_SORTS: readonly DiscrepancySort[] = ['amount', 'age'];

/** What a discrepancy is ordered by: its operation's time (ISO, UTC), its id, its amount's size (-1: none). */
export interface SortKey {
  readonly id: string;
  readonly time: string;
  readonly size: bigint;
}

export function sortKeyOf(d: DiscrepancyRecord): SortKey {
  const a = discrepancyAmount(d);
  return { id: d.id, time: d.occurred_at ?? d.detected_at ?? '', size: a === null ? -1n : a < 0n ? -a : a };
}

/** Largest amount first (ties oldest first), or oldest operation first; then by id, so the order is total. */
export function compareSortKeys(by: DiscrepancySort): (a: SortKey, b: SortKey) => number {
  const byAge = (a: SortKey, b: SortKey) =>
    a.time < b.time ? -1 : a.time > b.time ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  if (by === 'age') return byAge;
  return (a, b) => (a.size > b.size ? -1 : a.size < b.size ? 1 : byAge(a, b));
}

/** Largest amount first (ties oldest first), or oldest operation first. */
export function sortDiscrepancies(rows: readonly DiscrepancyRecord[], by: DiscrepancySort): DiscrepancyRecord[] {
  const compare = compareSortKeys(by);
  return rows
    .map((r) => ({ key: sortKeyOf(r), r }))
    .sort((a, b) => compare(a.key, b.key))
    .map((x) => x.r);
}

/**
 * The table's layout, grown a row at a time (`widen`): each column's width, and whether a row is accepted
 * (then a column says who accepted and why, for an auditor reading the list).
 */
export interface TableLayout {
  decided: boolean;
  widths: number[];
}

const TABLE_HEAD = ['amount', 'order_id', 'sub-merchant', 'type', 'status', 'operation time', 'what differs'];
const headOf = (decided: boolean) => [...TABLE_HEAD, ...(decided ? ['accepted by: why'] : []), 'id'];

export const emptyTableLayout = (): TableLayout => ({ decided: false, widths: [] });

/** A row's cells: what an operator acts on first (amount, order, sub-merchants by name, what differs), then the id. */
export function tableCellsOf(r: DiscrepancyRecord, names: ReadonlyMap<string, string>, decided: boolean): string[] {
  const amount = discrepancyAmount(r);
  const subs = subMerchantsOf(r).map((id) => names.get(id) ?? id);
  return [
    amount === null ? '-' : moneyText(amount, r.currency),
    r.order_id ?? r.payment_id ?? '-',
    subs.length ? subs.join(', ') : (r.receiver_name ?? '-'),
    r.type,
    r.status,
    (r.occurred_at ?? r.detected_at ?? '-').replace('T', ' ').slice(0, 19),
    whatDiffers(r),
    ...(decided ? [r.accepted_by === null ? '' : `${r.accepted_by}: ${r.accepted_note ?? ''}`] : []),
    r.id,
  ];
}

/** Grows the layout by these rows: their cells are measured with the accepted column, which stays when none is. */
export function widen(layout: TableLayout, rows: readonly DiscrepancyRecord[], names: ReadonlyMap<string, string>) {
  for (const r of rows) {
    layout.decided ||= r.accepted_by !== null;
    const cells = tableCellsOf(r, names, true);
    for (let i = 0; i < cells.length; i++) layout.widths[i] = Math.max(layout.widths[i] ?? 0, cells[i]!.length);
  }
}

/** The column widths of the table as printed: the head's and every row's, without the accepted column if none is. */
function widthsOf(layout: TableLayout): number[] {
  const all = headOf(true).map((h, i) => Math.max(h.length, layout.widths[i] ?? 0));
  return layout.decided ? all : [...all.slice(0, TABLE_HEAD.length), all[all.length - 1]!];
}

function lineOf(vals: readonly string[], widths: readonly number[]): string {
  return vals
    .map((v, i) => (i === 0 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
    .join('  ')
    .trimEnd();
}

/** The table's head line, with its newline. */
export const tableHeadOf = (layout: TableLayout): string => `${lineOf(headOf(layout.decided), widthsOf(layout))}\n`;

/** These rows' lines in a table of this layout (every row measured in it), each with its newline. */
export function tableLinesOf(
  layout: TableLayout,
  rows: readonly DiscrepancyRecord[],
  names: ReadonlyMap<string, string>,
): string {
  const widths = widthsOf(layout);
  return rows.map((r) => `${lineOf(tableCellsOf(r, names, layout.decided), widths)}\n`).join('');
}

/** The table's last line: how many discrepancies it lists. */
export const tableFootOf = (n: number): string => `${n} discrepanc${n === 1 ? 'y' : 'ies'}\n`;

/**
 * The table `recon discrepancies` prints: what an operator acts on first (amount, order, sub-merchants by
 * name, what differs); the id to pass to `explain`/`accept`.
 */
export function discrepanciesTable(
  rows: readonly DiscrepancyRecord[],
  names: ReadonlyMap<string, string> = new Map(),
): string {
  const layout = emptyTableLayout();
  widen(layout, rows, names);
  return tableHeadOf(layout) + tableLinesOf(layout, rows, names) + tableFootOf(rows.length);
}

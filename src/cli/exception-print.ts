import type { Sql } from '../db/connect';
import type { ExceptionPolicy } from '../exceptions/severity';
import { type ExceptionFilter, type ExceptionItem, exceptionBatches, exceptionJson } from '../exceptions/queries';
import { printable } from '../input-rules';
import { moneyText } from '../reconciliation/discrepancy-summary';

/**
 * `recon exceptions list` as text: a page (`--limit`) printed at once, or the whole list printed as it is read,
 * a batch at a time through one cursor in one snapshot of the views (a month of a million payments has a million
 * exceptions, most of them resolved: more than a process holds). Both print the bytes the page or the list
 * printed whole would.
 */

const HEAD = ['state', 'severity', 'due', 'amount in doubt', 'leg', 'type', 'assignee', 'last action', 'id'];
const AMOUNT = 3;

/** The amount in doubt as finance writes it, `-` when it concerns none. */
export const exceptionMoney = (x: ExceptionItem) =>
  x.amountInDoubt === null ? '-' : moneyText(BigInt(x.amountInDoubt), x.currency);

function cellsOf(x: ExceptionItem): string[] {
  return [
    x.state,
    x.severity,
    (x.dueAt ?? '-').slice(0, 16).replace('T', ' '),
    exceptionMoney(x),
    x.leg,
    x.type,
    x.assignee ?? '-',
    x.lastAction ? `${x.lastAction} by ${x.lastBy}` : '-',
    x.id,
  ].map((c) => printable(c, { oneLine: true }));
}

const lineOf = (widths: readonly number[], cells: readonly string[]) =>
  cells
    .map((c, i) => (i === AMOUNT ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
    .join('  ')
    .trimEnd();

const footOf = (n: number) => `${n} exception${n === 1 ? '' : 's'}\n`;

function widen(widths: number[], items: readonly ExceptionItem[]): void {
  for (const x of items) {
    const cells = cellsOf(x);
    for (let i = 0; i < cells.length; i++) widths[i] = Math.max(widths[i]!, cells[i]!.length);
  }
}

/** A page as a table, its count under it. */
export function exceptionTable(items: readonly ExceptionItem[]): string {
  const widths = HEAD.map((h) => h.length);
  widen(widths, items);
  return `${[lineOf(widths, HEAD), ...items.map((x) => lineOf(widths, cellsOf(x)))].join('\n')}\n${footOf(items.length)}`;
}

/** A page as JSON, with the `next` of the page after it. */
export const exceptionPageJson = (items: readonly ExceptionItem[], next: string | null) =>
  `${JSON.stringify({ items: items.map(exceptionJson), next }, null, 2)}\n`;

type Pass = (each: (items: readonly ExceptionItem[]) => Promise<void> | undefined) => Promise<number>;

/**
 * Prints every exception matching `f` as it is read: JSON element by element, a table after a first pass has
 * measured its columns. All passes read one snapshot (a repeatable-read, read-only transaction) at one `now`.
 */
export async function printExceptionList(
  sql: Sql,
  f: ExceptionFilter,
  opts: { now: Date; policy?: ExceptionPolicy | undefined; format: 'table' | 'json'; batchRows?: number },
  out: (text: string) => Promise<void> | undefined,
): Promise<void> {
  await sql.begin('isolation level repeatable read read only', async (tx) => {
    const pass: Pass = async (each) => {
      let n = 0;
      const batches = exceptionBatches(tx as unknown as Sql, f, opts.now, opts.policy, { batchRows: opts.batchRows });
      for await (const items of batches) {
        n += items.length;
        await each(items);
      }
      return n;
    };
    if (opts.format === 'json') await printJson(pass, out);
    else await printTable(pass, out);
  });
}

async function printJson(pass: Pass, out: (text: string) => Promise<void> | undefined): Promise<void> {
  // JSON.stringify({ items, next: null }, null, 2): each item indented by four spaces, "[]" when there is none
  let first = true;
  const n = await pass((items) => {
    if (items.length === 0) return undefined;
    const text = items.map((x) => `    ${JSON.stringify(exceptionJson(x), null, 2).replace(/\n/g, '\n    ')}`);
    const head = first ? '{\n  "items": [\n' : ',\n';
    first = false;
    return out(head + text.join(',\n'));
  });
  await out(n === 0 ? '{\n  "items": [],\n  "next": null\n}\n' : '\n  ],\n  "next": null\n}\n');
}

async function printTable(pass: Pass, out: (text: string) => Promise<void> | undefined): Promise<void> {
  const widths = HEAD.map((h) => h.length);
  await pass((items) => void widen(widths, items));
  await out(`${lineOf(widths, HEAD)}\n`);
  const n = await pass((items) =>
    items.length ? out(`${items.map((x) => lineOf(widths, cellsOf(x))).join('\n')}\n`) : undefined,
  );
  await out(footOf(n));
}

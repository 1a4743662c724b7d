import type { Sql } from '../db/connect';
import { printable } from '../input-rules';
import {
  CSV_HEADER,
  csvLineOf,
  discrepancyJson,
  emptyTableLayout,
  tableFootOf,
  tableHeadOf,
  tableLinesOf,
  widen,
} from '../reconciliation/discrepancy-listing';
import { subMerchantNames } from '../reconciliation/discrepancy-queries';
import type { DiscrepancyPass } from '../reconciliation/discrepancy-stream';

export type ListFormat = 'table' | 'json' | 'csv';

/**
 * Prints the list as it is read, a batch at a time (a month of a million payments lists a million rows): the
 * same bytes as the list printed whole. The table measures its columns in a first pass and prints in a second
 * (sub-merchants by their names in the directory).
 */
export async function printDiscrepancies(
  sql: Sql,
  pass: DiscrepancyPass,
  format: ListFormat,
  out: (text: string) => Promise<void> | undefined,
): Promise<void> {
  if (format === 'csv') {
    await out(CSV_HEADER);
    await pass((rows) => out(rows.map(csvLineOf).join('')));
  } else if (format === 'json') {
    // JSON.stringify(list, null, 2): each element indented by two more spaces, "[]" when empty
    let first = true;
    const n = await pass((rows) => {
      const items = rows.map((d) => `  ${JSON.stringify(discrepancyJson(d), null, 2).replace(/\n/g, '\n  ')}`);
      if (rows.length === 0) return undefined;
      const text = (first ? '[\n' : ',\n') + items.join(',\n');
      first = false;
      return out(text);
    });
    await out(n === 0 ? '[]\n' : '\n]\n');
  } else {
    const layout = emptyTableLayout();
    const names = await subMerchantNames(sql);
    await pass((rows) => widen(layout, rows, names));
    // receiver names and ids come from the PSP and the orders: escapes shown, never acted on by the terminal
    await out(printable(tableHeadOf(layout)));
    const n = await pass((rows) => out(printable(tableLinesOf(layout, rows, names))));
    await out(tableFootOf(n));
  }
}

import type { ListFormat } from '../../src/cli/discrepancy-print';
import type { Sql } from '../../src/db/connect';
import {
  type DiscrepancyFilter,
  type DiscrepancySort,
  discrepanciesCsv,
  discrepanciesTable,
  discrepancyJson,
  listDiscrepancies,
  sortDiscrepancies,
  subMerchantNames,
  subMerchantsOf,
} from '../../src/reconciliation/discrepancy-queries';
import type { AppendRequest } from '../../src/store/types';
import { at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from './fixtures';

/**
 * The month the tests of `recon discrepancies` read in batches list (list-in-batches, list-output-ends), and
 * the list as it was printed before, read whole and sorted in memory.
 */

const OBSERVED = at('2024-05-10T20:00:00Z');

/** enough that the JSON list (over 64 KiB, a pipe's buffer) cannot be written whole to a reader gone */
export const LIST_PAYMENTS = 400;

function payment(i: number): AppendRequest[] {
  // three instants for all payments: many ties in time, broken by id
  const time = at(`2024-05-10T${String(8 + (i % 3)).padStart(2, '0')}:00:00Z`);
  const amount = BigInt(1_000 + (i % 5) * 250);
  const paymentId = `pay-${String(i).padStart(3, '0')}`;
  const receivers = [{ name: i % 2 ? 'Alpha Shop' : 'Beta Shop', amount: amount - 10n, fee: 10n }];
  const out: AppendRequest[] = [];
  // every fourth is missing from the register (missing_in_report); the others' register and period agree
  if (i % 4 !== 0)
    out.push(registerRows({ paymentId, dateTime: time, amount, receivers, reportId: 'r1', observedAt: OBSERVED }));
  // every third states another merchant fee in the period (fee_mismatch)
  const merchantFee = i % 3 === 0 ? 20n : 10n;
  out.push(periodRow({ paymentId, dateTime: time, amount, merchantFee, reportId: 'r1', observedAt: OBSERVED }));
  // every fifth's webhook states another amount (amount_mismatch); every seventh has none
  if (i % 7 !== 0)
    out.push(
      webhook({ paymentId, processedAt: time, amount: i % 5 === 0 ? amount + 1n : amount, fee: 10n, receivedAt: time }),
    );
  return out;
}

/** Two sub-merchants, LIST_PAYMENTS payments of 10 May 2024 with their breaks, and the day's window synced. */
export function listMonth(): AppendRequest[] {
  return [
    subMerchant('sm-alpha', 'Alpha Shop'),
    subMerchant('sm-beta', 'Beta Shop'),
    ...Array.from({ length: LIST_PAYMENTS }, (_, i) => payment(i)).flat(),
    syncCompleted({
      from: at('2024-05-10T00:00:00Z'),
      to: at('2024-05-11T00:00:00Z'),
      completedAt: at('2024-05-13T00:00:00Z'),
      reportId: 'r1',
    }),
  ];
}

/** The list read whole and sorted in memory, as `recon discrepancies` printed it before it read in batches. */
export async function wholeList(
  sql: Sql,
  f: DiscrepancyFilter,
  sort: DiscrepancySort,
  format: ListFormat,
): Promise<string> {
  const r = await listDiscrepancies(sql, f);
  if (!r.ok) throw new Error(r.message);
  const rows = sortDiscrepancies(r.value, sort);
  if (format === 'json') return JSON.stringify(rows.map(discrepancyJson), null, 2) + '\n';
  if (format === 'csv') return discrepanciesCsv(rows);
  return discrepanciesTable(rows, await subMerchantNames(sql, [...new Set(rows.flatMap(subMerchantsOf))]));
}

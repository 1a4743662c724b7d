import type { Sql } from '../db/connect';
import { quoteForMessage } from '../input-rules';
import { statementFileStem } from '../statement-file-names';
import { type CsvIssue, differenceOf, lookOf, type SubMerchantRow } from './sub-merchants';

/**
 * A partial directory (a file of new rows only) checked against the sub-merchants already registered and absent
 * from it: combineDirectory sees only the files given, so a new row could take a stored sub-merchant's name, a
 * name printing as its name, or its statement file, and the receiverName lookup or every later month's
 * statements would break. A stored sub-merchant the files give again is replaced by their row (a re-import or a
 * rename), so it is not compared.
 */

export interface StoredSubMerchant {
  readonly subMerchantId: string;
  readonly name: string;
}

/** The directory as the journal projection knows it (recon.sub_merchants); none before the first projection. */
export async function storedDirectory(sql: Sql): Promise<StoredSubMerchant[]> {
  const [exists] = await sql<{ ok: boolean }[]>`select to_regclass('recon.sub_merchants') is not null as ok`;
  if (!exists?.ok) return [];
  const rows = await sql<{ sub_merchant_id: string; name: string }[]>`
    select sub_merchant_id, name from recon.sub_merchants order by sub_merchant_id collate "C"`;
  return rows.map((r) => ({ subMerchantId: r.sub_merchant_id, name: r.name }));
}

/** Each row that clashes with a stored sub-merchant the rows do not give again, naming its file, line and that sub-merchant. */
export function storedClashes(rows: readonly SubMerchantRow[], stored: readonly StoredSubMerchant[]): CsvIssue[] {
  const given = new Set(rows.map((r) => r.subMerchantId));
  const byName = new Map<string, StoredSubMerchant>();
  const byLook = new Map<string, StoredSubMerchant>();
  const byFile = new Map<string, StoredSubMerchant>();
  for (const s of stored) {
    if (given.has(s.subMerchantId)) continue;
    byName.set(s.name, s);
    byLook.set(lookOf(s.name), s);
    byFile.set(statementFileStem(s.subMerchantId, s.name).toLowerCase(), s);
  }
  const issues: CsvIssue[] = [];
  for (const row of rows) {
    const of = (s: StoredSubMerchant) => `${s.subMerchantId} (${quoteForMessage(s.name)}), already registered`;
    const same = byName.get(row.name);
    const alike = byLook.get(lookOf(row.name));
    const sharing = byFile.get(statementFileStem(row.subMerchantId, row.name).toLowerCase());
    const at = { file: row.file, line: row.line };
    if (same)
      issues.push({
        ...at,
        column: 'name',
        message: `${quoteForMessage(row.name)} is already the name of ${of(same)}; a receiverName must map to one sub-merchant (a registered sub-merchant is never removed: give ${same.subMerchantId} again under another name to free this one)`,
      });
    else if (alike)
      issues.push({
        ...at,
        column: 'name',
        message: `${quoteForMessage(row.name)} prints as the name of ${of(alike)}, and differs from it ${differenceOf(row.name, alike.name)}: both would read as one sub-merchant on every statement; give a name a reader can tell apart`,
      });
    else if (sharing)
      issues.push({
        ...at,
        column: 'sub_merchant_id',
        message: `${row.subMerchantId} (${quoteForMessage(row.name)}) and ${of(sharing)} would write one statement file, ${statementFileStem(row.subMerchantId, row.name)}-YYYY-MM.xlsx (case ignored, as some file systems do), and the month's statements would be refused for everyone; change the id or the name`,
      });
  }
  return issues;
}

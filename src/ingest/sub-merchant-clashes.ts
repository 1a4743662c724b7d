import type { Sql } from '../db/connect';
import { SubMerchantRegistered } from '../events/ledger-events';
import { parsePosition, type EventStore, type Position } from '../store/types';
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

/** Events read at a time from the store's tail (past the journal projection's checkpoint). */
const TAIL_PAGE = 1000;

/**
 * The registrations after `from`, in store order. PostgreSQL: filtered by the server, so a long tail (a sync the
 * projection has not caught up with) is scanned there rather than read through; EventStoreDB: read page by page.
 */
async function registeredSince(
  sql: Sql,
  store: EventStore,
  from: Position | undefined,
): Promise<{ subMerchantId: string; name: string }[]> {
  if (store.backend === 'postgres') {
    const rows = await sql<{ data: { subMerchantId: string; name: string } }[]>`
      select data from es_events where type = ${SubMerchantRegistered.type}
        and (transaction_id, global_position) > (${from?.commit.toString() ?? '0'}::text::xid8, ${from?.prepare.toString() ?? '0'}::int8)
      order by transaction_id, global_position`;
    return rows.map((r) => r.data);
  }
  const out: { subMerchantId: string; name: string }[] = [];
  for (;;) {
    const page = await store.readAll(from, { maxCount: TAIL_PAGE });
    for (const e of page)
      if (e.type === SubMerchantRegistered.type) out.push(e.data as { subMerchantId: string; name: string });
    if (page.length < TAIL_PAGE) return out;
    from = page[page.length - 1]!.position;
  }
}

/**
 * The registered directory: as the journal projection knows it (recon.sub_merchants, read in one statement with
 * the live build's checkpoint), then the registrations appended after that checkpoint, so that an import made
 * before `recon project` ran is known to the next import as well.
 */
export async function storedDirectory(sql: Sql, store: EventStore): Promise<StoredSubMerchant[]> {
  const [exists] = await sql<{ ok: boolean }[]>`select to_regclass('recon.sub_merchants') is not null as ok`;
  const byId = new Map<string, string>();
  let from: Position | undefined;
  if (exists?.ok) {
    // one statement, one snapshot: the rows are those of the checkpoint read beside them
    const [r] = await sql<{ checkpoint: string | null; rows: { id: string; name: string }[] | null }[]>`
      select (select checkpoint from projection_builds where name = 'journal' and status = 'live') as checkpoint,
             (select json_agg(json_build_object('id', sub_merchant_id, 'name', name)) from recon.sub_merchants) as rows`;
    for (const row of r?.rows ?? []) byId.set(row.id, row.name);
    from = r?.checkpoint ? parsePosition(r.checkpoint) : undefined;
  }
  for (const d of await registeredSince(sql, store, from)) byId.set(d.subMerchantId, d.name);
  return [...byId].map(([subMerchantId, name]) => ({ subMerchantId, name }));
}

/** Each row that clashes with a stored sub-merchant the rows do not give again, naming its file, line and that sub-merchant. */
export function storedClashes(rows: readonly SubMerchantRow[], stored: readonly StoredSubMerchant[]): CsvIssue[] {
  const given = new Set(rows.map((r) => r.subMerchantId));
  const nameOf = new Map(stored.map((s) => [s.subMerchantId, s.name]));
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
    // a name it holds already adds no clash: a re-import, or a new hold period, writes no new name
    if (nameOf.get(row.subMerchantId) === row.name) continue;
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

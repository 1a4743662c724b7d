import { randomUUID } from 'node:crypto';
import type { Sql } from '../../src/db/connect';
import { DISCREPANCY_DEFINITIONS } from '../../src/reconciliation/discrepancies/columns';

/**
 * Discrepancies for the alert tests, written where the readers find them: a `recon.settlement_discrepancies`
 * table with the core's columns (src/reconciliation/discrepancies/columns.ts), read through
 * listDiscrepancies like the projection's view.
 */

export async function discrepancyTable(sql: Sql): Promise<void> {
  await sql.unsafe(`create table if not exists recon.settlement_discrepancies (${DISCREPANCY_DEFINITIONS})`);
}

export interface Break {
  type: string;
  values: Record<string, unknown>;
  currency: string;
  detectedAt: string;
  subMerchant?: string;
  status?: 'open' | 'resolved' | 'accepted';
}

export async function addBreak(sql: Sql, b: Break): Promise<string> {
  const id = randomUUID();
  await sql`insert into recon.settlement_discrepancies ${sql({
    id,
    type: b.type,
    status: b.status ?? 'open',
    operation_key: `settlement:${id}`,
    sub_merchant_id: b.subMerchant ?? null,
    sub_merchant_ids: b.subMerchant ? [b.subMerchant] : [],
    currency: b.currency,
    occurred_at: new Date(b.detectedAt),
    values: sql.json(b.values as never),
    evidence: [],
    detected_at: new Date(b.detectedAt),
    detected_by_event: randomUUID(),
    updated_at: new Date(b.detectedAt),
    updated_by_event: randomUUID(),
  } as never)}`;
  return id;
}

export async function clearBreaks(sql: Sql): Promise<void> {
  await sql`delete from recon.settlement_discrepancies`;
}

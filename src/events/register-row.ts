import type { NormalizedRegisterRecord } from './ingest-events';

/**
 * How one register row is recognised across observations, for everyone who must agree on it (the journal,
 * ingestion): POS, paymentId, method, receiverName and dateTime. The receivers of a split differ by name,
 * partial refunds of one payment by time. Amounts are not part of it, so a later observation with a
 * corrected amount replaces the row instead of adding a second one; only a row without dateTime (which a
 * well-formed register never has) is told apart by its originalAmount, as the reconciliation's matching
 * does (src/ledger/matching.ts, `sameRow`).
 */
export function registerRowKey(posId: string, r: Pick<NormalizedRegisterRecord, 'paymentId' | 'method' | 'receiverName' | 'dateTime' | 'originalAmount'>): string {
  const head = `${posId}|${r.paymentId}|${r.method}|${receiverOf(r) ?? ''}`;
  return r.dateTime ? `${head}|${r.dateTime}` : `${head}||${r.originalAmount ?? ''}`;
}

/** The receiver of a split row, or null for a row of the marketplace itself. */
export function receiverOf(r: Pick<NormalizedRegisterRecord, 'receiverName'>): string | null {
  const name = r.receiverName?.trim();
  return name ? name : null;
}

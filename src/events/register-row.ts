import type { NormalizedPeriodRecord, NormalizedRegisterRecord } from './ingest-events';

/**
 * How one register row is recognised across observations, for everyone who must agree on it (the journal,
 * ingestion): POS, paymentId, method, receiverName and dateTime. The receivers of a split differ by name,
 * partial refunds of one payment by time. Amounts are not part of it, so a later observation with a
 * corrected amount replaces the row instead of adding a second one; only a row without dateTime (which a
 * well-formed register never has) is told apart by its originalAmount, as the reconciliation's matching
 * does (src/reconciliation/matching.ts, `sameRow`).
 */
export function registerRowKey(
  posId: string,
  r: Pick<NormalizedRegisterRecord, 'paymentId' | 'method' | 'receiverName' | 'dateTime' | 'originalAmount'>,
): string {
  const head = `${posId}|${r.paymentId}|${r.method}|${receiverOf(r) ?? ''}`;
  return r.dateTime ? `${head}|${r.dateTime}` : `${head}||${r.originalAmount ?? ''}`;
}

/**
 * How one period record is recognised across observations (ingestion), as the reconciliation's matching
 * recognises it (src/reconciliation/matching.ts, `sameRow`; period records have no receiver and no report id): POS,
 * paymentId and method (`periodRowGroup`), then the same dateTime, or the same amount when either record has
 * no dateTime (the PSP gives none for some init/pending records, and gives one once they are final). That
 * last rule is not an equivalence (a record without time joins rows of different times), so it is a
 * predicate over a group rather than a key.
 */
export function periodRowGroup(posId: string, r: Pick<NormalizedPeriodRecord, 'paymentId' | 'method'>): string {
  return `${posId}|${r.paymentId}|${r.method}`;
}

export function samePeriodRow(
  a: Pick<NormalizedPeriodRecord, 'dateTime' | 'amount'>,
  b: Pick<NormalizedPeriodRecord, 'dateTime' | 'amount'>,
): boolean {
  if (a.dateTime && b.dateTime) return a.dateTime === b.dateTime;
  return BigInt(a.amount) === BigInt(b.amount);
}

/** The receiver of a split row, or null for a row of the marketplace itself. */
export function receiverOf(r: Pick<NormalizedRegisterRecord, 'receiverName'>): string | null {
  const name = r.receiverName?.trim();
  return name ? name : null;
}

/** The report a register row observation came from (`metadata.reportId`), null when none is named. */
export function reportIdOf(metadata: Readonly<Record<string, unknown>>): string | null {
  const r = metadata['reportId'];
  return typeof r === 'string' && r !== '' ? r : null;
}

/**
 * Is this observation a second row of a register row in the report whose row is in force (`inForce`: that
 * row's report id)? Such a row is a `duplicate`: the report's first row stays in force, as the reconciliation
 * compares it (src/reconciliation/matching.ts, `consolidate`), so what is booked is what was compared.
 */
export function secondRowOfReport(inForce: string | null | undefined, reportId: string | null): boolean {
  return reportId !== null && inForce === reportId;
}

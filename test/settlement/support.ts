import type { DueDay } from '../../src/reconciliation/settlement/expected';
import type { BankCredit } from '../../src/reconciliation/settlement/match';
import { bankConfigFrom, bankConfigSchema, type BankConfig } from '../../src/config/bank';
import type { Sql } from '../../src/db/connect';
import { settlementCredit, statementImported } from '../../fixtures/bank-events';
import { silentLogger } from '../../src/log';
import { rebuildProjection, type RunnerDeps } from '../../src/projector/runner';
import type { AppendRequest, EventStore } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import { projection as settlement } from '../../projections/settlement';
import { registerRows } from '../discrepancies/fixtures';
import { catchUp } from '../support/projection-spec';

/** Events and runner deps for the cash leg's tests: one EUR settlement account, lag 1, tolerance 5. */

export const ACCOUNT = 'DE89370400440532013000';

export const BANK: BankConfig = bankConfigFrom(
  bankConfigSchema.parse({
    accounts: [{ id: ACCOUNT, currency: 'EUR', role: 'settlement', name: 'Settlement EUR' }],
    settlement: { lagBusinessDays: 1, holidays: ['2026-01-05'], tolerance: { EUR: '5' }, lateBusinessDays: 2 },
  }),
);

export function cashDeps(sql: Sql, store: EventStore, bank: BankConfig = BANK): RunnerDeps {
  return { sql, store, log: silentLogger, timezone: 'UTC', graceHours: 48, bank, projections: [journal, settlement] };
}

/** Catches both projections up to the head (the store's readAll may stop short while other tests write). */
export async function projectCash(sql: Sql, store: EventStore, batchSize = 1000, bank: BankConfig = BANK) {
  return catchUp(cashDeps(sql, store, bank), { batchSize });
}

export async function rebuildCash(sql: Sql, store: EventStore, batchSize: number) {
  await rebuildProjection(cashDeps(sql, store), 'settlement', { batchSize });
  await rebuildProjection(cashDeps(sql, store), 'journal', { batchSize });
  await projectCash(sql, store, batchSize);
}

/** A sale of `amount` on `day` (noon UTC) to one receiver with fee `fee`: the PSP owes amount − fee. */
export function sale(paymentId: string, day: string, amount: bigint, fee: bigint, currency = 'EUR'): AppendRequest {
  return registerRows({
    paymentId,
    dateTime: `${day}T12:00:00.000Z`,
    amount,
    currency,
    receivers: [{ name: 'Shop One', amount: amount - fee, fee }],
    reportId: `report-${day}`,
    observedAt: `${day}T23:00:00.000Z`,
  });
}

export function credit(bankRef: string, day: string, amount: bigint, statementId = `stmt-${day}`): AppendRequest {
  return settlementCredit({ accountId: ACCOUNT, currency: 'EUR', bankRef, day, amount, statementId });
}

export function statement(
  statementId: string,
  from: string,
  to: string,
  opening: bigint,
  closing: bigint,
  entries: number,
): AppendRequest {
  return statementImported({ accountId: ACCOUNT, currency: 'EUR', statementId, from, to, opening, closing, entries });
}

/** No holidays: the matching's business days are the weekdays. */
export const NONE: ReadonlySet<string> = new Set<string>();

/** A settlement day as the matching takes it (judgeSettlements): EUR, owed `amount`, no fees. */
export const dueDay = (day: string, amount: bigint, lastActivity: string): DueDay => ({
  currency: 'EUR',
  day,
  firstActivity: lastActivity,
  lastActivity,
  clearing: amount,
  fees: 0n,
  amount,
});

/** A bank credit as the matching takes it (judgeSettlements), EUR, on a settlement account. */
export const matchCredit = (id: string, bookingDate: string, amount: bigint): BankCredit => ({
  id,
  accountId: 'DE00SETTLE',
  currency: 'EUR',
  bookingDate,
  amount,
  bankRef: `ref-${id}`,
});

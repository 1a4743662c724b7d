import { DateTime, type WeekdayNumbers } from 'luxon';
import { bankConfigFrom, bankConfigSchema } from '../../src/config/bank';
import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked, discrepancyStream } from '../../src/events/audit-events';
import { newEvent } from '../../src/events/catalog';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import type { Person } from '../../src/people/directory';
import type { EventStore } from '../../src/store/types';

/**
 * The events a payout run is drafted from, as the statements and the directory write them: sub-merchants with
 * and without a payout account, a month's statement runs with payouts and holds, decisions on held money.
 */

export const BANK = bankConfigFrom(
  bankConfigSchema.parse({
    accounts: [
      { id: 'DE89 3704 0044 0532 0130 00', currency: 'EUR', role: 'payouts' },
      { id: 'UA213223130000026007233566001', currency: 'UAH', role: 'payouts' },
      { id: '10010010/1234567890', currency: 'JPY', role: 'payouts' },
      { id: 'UA903052992990004149123456789', currency: 'UAH', role: 'settlement' },
    ],
  }),
);
export const ENV = { RECON_PAYOUTS_DEBTOR_NAME: 'Marketplace & Co', RECON_PAYOUTS_DEBTOR_BIC: 'COBADEFFXXX' };

export const person = (id: string, role: Person['role']): Person => ({ id, name: id, role });

export async function register(
  store: EventStore,
  id: string,
  o: { payoutAccount?: string; payoutBic?: string; legalName?: string } = {},
): Promise<void> {
  await store.append(subMerchantStream(id), [
    newEvent(SubMerchantRegistered, { subMerchantId: id, name: `${id} shop`, reserveHoldDays: 0, ...o }),
  ]);
}

export interface Payout {
  subMerchantId: string;
  currency: string;
  reference: string | null;
  amountDue: string;
  held: string;
  payable: string;
  holds: [string, string][];
}

let cut = 1;

/** A statement run of the month with these payouts (a new cut each time, as a run issued later is). */
export async function issue(store: EventStore, month: string, payouts: Payout[]): Promise<string> {
  const position = `${cut}/${cut}`;
  cut += 1;
  const e = newEvent(StatementIssued, {
    month,
    timezone: 'Europe/Kyiv',
    subMerchantId: null,
    position,
    figuresSha256: 'a'.repeat(64),
    statements: payouts.length,
    files: [],
    payouts,
  });
  await store.append(statementStream(month), [e]);
  return e.id;
}

export async function decide(store: EventStore, id: string, decision: 'pay' | 'withhold' | 'write_off') {
  const e = newEvent(DiscrepancyAccepted, {
    discrepancyId: id,
    note: 'checked with the PSP',
    acceptedBy: 'olena',
    acceptedAt: '2026-11-20T10:00:00.000Z',
    decision,
  });
  await store.append(discrepancyStream(id), [e]);
  return e.id;
}

export async function revoke(store: EventStore, id: string, acceptance: string) {
  await store.append(discrepancyStream(id), [
    newEvent(DiscrepancyAcceptanceRevoked, {
      discrepancyId: id,
      acceptance,
      reason: 'new evidence',
      revokedBy: 'olena',
      revokedAt: '2026-11-21T10:00:00.000Z',
    }),
  ]);
}

/** What the bank paid on each reference where no bank statement was imported: nothing (draftRun's `paidByBank`). */
export const NONE_PAID: ReadonlyMap<string, bigint> = new Map();

/** A day of the week (1 Monday … 7 Sunday) about two weeks from now in Europe/Kyiv: always ahead, within a year. */
export function weekdayAhead(weekday: WeekdayNumbers): string {
  return DateTime.now().setZone('Europe/Kyiv').plus({ weeks: 2 }).set({ weekday }).toISODate()!;
}

import { bankConfigFrom, bankConfigSchema } from '../../src/config/bank';
import type { Sql } from '../../src/db/connect';
import { bankAccountStream, BankEntryBooked } from '../../src/events/bank-events';
import { newEvent } from '../../src/events/catalog';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { silentLogger } from '../../src/log';
import { rebuildProjection } from '../../src/projector/runner';
import type { AppendRequest, EventStore } from '../../src/store/types';
import { projection as payoutsProjection } from '../../projections/payouts';
import { catchUp } from '../support/projection-spec';

/** Events of the payout tests, appended directly (the bank parsers are another piece). */

export const PAYOUTS_ACCOUNT = 'UA903052992990004149123456789';
export const SETTLEMENT_ACCOUNT = 'UA213223130000026007233566001';
export const TZ = 'Europe/Kyiv';

export const bank = bankConfigFrom(
  bankConfigSchema.parse({
    accounts: [
      { id: PAYOUTS_ACCOUNT, currency: 'EUR', role: 'payouts' },
      { id: SETTLEMENT_ACCOUNT, currency: 'EUR', role: 'settlement' },
    ],
    payouts: { dueDays: 5, matchWindowDays: 10 },
  }),
);
export const payouts = payoutsProjection;

export function payee(id: string, name: string, payoutAccount?: string): AppendRequest {
  return {
    stream: subMerchantStream(id),
    events: [
      newEvent(SubMerchantRegistered, {
        subMerchantId: id,
        name,
        reserveHoldDays: 90,
        ...(payoutAccount ? { payoutAccount } : {}),
      }),
    ],
  };
}

export interface Due {
  subMerchantId: string;
  reference: string | null;
  payable: bigint;
  currency?: string;
  /** a correction's amount due, when it differs from `payable` */
  amountDue?: bigint;
  /** a correction's figure for what the month's runs now ask in all (StatementIssued `stillAsked`) */
  stillAsked?: bigint;
}

/**
 * A statement run that asks for `due` (as `recon statements` records it), issued at `issuedAt`; cut there unless
 * `o.cutAt` names another time (a run issued again at an earlier cut), for all unless `o.subMerchantId`.
 */
export function issued(
  month: string,
  issuedAt: string,
  due: Due[],
  o: { cutAt?: string; subMerchantId?: string } = {},
): AppendRequest {
  return {
    stream: statementStream(month),
    events: [
      newEvent(
        StatementIssued,
        {
          month,
          timezone: TZ,
          subMerchantId: o.subMerchantId ?? null,
          position: `${Date.parse(o.cutAt ?? issuedAt)}/0`,
          figuresSha256: '0'.repeat(64),
          statements: due.length,
          files: [],
          payouts: due.map((d) => ({
            subMerchantId: d.subMerchantId,
            currency: d.currency ?? 'EUR',
            reference: d.reference,
            amountDue: (d.amountDue ?? d.payable).toString(),
            held: '0',
            payable: d.payable.toString(),
            ...(d.stillAsked !== undefined ? { stillAsked: d.stillAsked.toString() } : {}),
            holds: [],
          })),
        },
        { metadata: { issuedAt } },
      ),
    ],
  };
}

export interface Line {
  amount: bigint;
  bookingDate: string;
  direction?: 'credit' | 'debit';
  account?: string;
  remittance?: string;
  endToEndId?: string;
  counterpartyName?: string;
  counterpartyAccount?: string;
  isReturn?: boolean;
  currency?: string;
  bankRef: string;
}

export function booked(l: Line): AppendRequest {
  const accountId = l.account ?? PAYOUTS_ACCOUNT;
  return {
    stream: bankAccountStream(accountId),
    events: [
      newEvent(BankEntryBooked, {
        accountId,
        currency: l.currency ?? 'EUR',
        direction: l.direction ?? 'debit',
        amount: l.amount.toString(),
        bookingDate: l.bookingDate,
        valueDate: l.bookingDate,
        bankRef: l.bankRef,
        batchRef: null,
        detail: 0,
        endToEndId: l.endToEndId ?? null,
        remittance: l.remittance ?? null,
        counterpartyName: l.counterpartyName ?? null,
        counterpartyAccount: l.counterpartyAccount ?? null,
        isReturn: l.isReturn ?? false,
        transactionCode: null,
        statementId: 'STMT-1',
      }),
    ],
  };
}

export async function appendAll(store: EventStore, requests: readonly AppendRequest[]): Promise<void> {
  for (const r of requests) await store.append(r.stream, [...r.events]);
}

const deps = (sql: Sql, store: EventStore) => ({
  sql,
  store,
  log: silentLogger,
  timezone: TZ,
  graceHours: 48,
  bank,
  projections: [payouts],
});

/** Catches the payouts projection up to the head (see test/discrepancies/fixtures.ts `project`). */
export async function project(sql: Sql, store: EventStore, batchSize = 1000) {
  return catchUp(deps(sql, store), { batchSize });
}

export async function rebuild(sql: Sql, store: EventStore, batchSize: number): Promise<void> {
  await rebuildProjection(deps(sql, store), 'payouts', { batchSize });
  await project(sql, store, batchSize);
}

/** Everything the payouts projection publishes, in a stable order (replay = live comparisons). */
export async function views(sql: Sql) {
  return {
    payouts: await sql`select * from recon.payouts order by reference`,
    stillAsked: await sql`select * from recon.payout_still_asked order by event_id, sub_merchant_id, currency`,
    lines: await sql`select * from recon.payout_lines order by event_id`,
    discrepancies: await sql`select * from recon.payout_discrepancies order by id`,
  };
}

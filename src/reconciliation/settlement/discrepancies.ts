import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked } from '../../events/audit-events';
import { dataOf, isEvent } from '../../events/catalog';
import { localMidnight } from '../../journal-rules';
import type { Tx } from '../../projector/projection';
import type { RecordedEvent } from '../../store/types';
import { discrepancyId } from '../discrepancies/id';
import {
  applyFindings,
  type Finding,
  newLifecycle,
  recordAcceptance,
  recordRevocation,
} from '../discrepancies/lifecycle';
import type { DiscrepancyTypeOf } from '../discrepancies/registry';
import type { DiscrepancyRow } from '../discrepancies/columns';
import { readDiscrepancies, writeDiscrepancies } from '../discrepancies/table';
import type { SettlementJudgement } from './match';
import { deadlineOf, type MatchRules } from './match';
import { RECOVERABLE_TYPES, type Recovery, type WriteOffInForce } from './recovered';

/**
 * The cash leg's discrepancies: a judgement gives the findings that hold now for one currency, and the core's
 * lifecycle (src/reconciliation/discrepancies/lifecycle.ts) opens the new ones, resolves the ones that no
 * longer hold and reopens one that holds again. The leg's clock is the time the append that made the change
 * was recorded (its last event), as its rows were first stamped. An accepted one (DiscrepancyAccepted) keeps
 * its status and the values it was accepted with, as in every leg.
 */

/** A finding of the cash leg (no payment, no receiver; the settlement leg's types, from the registry). */
export type SettlementDiscrepancy = Finding<DiscrepancyTypeOf<'settlement'>>;

type SettlementType = DiscrepancyTypeOf<'settlement'>;
type Found = Pick<SettlementDiscrepancy, 'posId' | 'operationKey' | 'currency' | 'occurredAt' | 'values' | 'evidence'>;

/** A finding of the cash leg named by its key (no payment, no receiver). */
const finding = (type: SettlementType, key: string, f: Found): SettlementDiscrepancy => ({
  id: discrepancyId(type, key),
  type,
  paymentId: null,
  orderId: null,
  method: null,
  receiverName: null,
  subMerchantIds: [],
  ...f,
});

/** A credit matched to settlement days: short of what they owed, and each day it paid late. */
function matchFindings(
  currency: string,
  m: SettlementJudgement['matches'][number],
  at: (day: string) => string,
): SettlementDiscrepancy[] {
  const c = m.credit;
  const out: SettlementDiscrepancy[] = [];
  const fromCredit = { posId: c.accountId, currency, occurredAt: at(c.bookingDate), evidence: [c.id] };
  if (m.shortfall > 0n)
    out.push(
      finding('settlement_short', c.id, {
        ...fromCredit,
        operationKey: `bank:${c.id}`,
        values: {
          due_on: m.days.map((d) => d.day),
          expected: m.expected.toString(),
          received: c.amount.toString(),
          shortfall: m.shortfall.toString(),
          booked_on: c.bookingDate,
          bank_ref: c.bankRef ?? '',
        },
      }),
    );
  for (const l of m.late)
    out.push(
      finding('settlement_late', `${currency}|${l.day}`, {
        ...fromCredit,
        operationKey: `settlement:${currency}:${l.day}`,
        values: {
          due_on: l.day,
          received_on: c.bookingDate,
          business_days_late: l.businessDays,
          received: c.amount.toString(),
          bank_ref: c.bankRef ?? '',
        },
      }),
    );
  return out;
}

/** The findings of one currency's judgement, by id. */
export function discrepanciesOf(
  currency: string,
  j: SettlementJudgement,
  rules: Pick<MatchRules, 'lateBusinessDays' | 'holidays'>,
  timezone: string,
): SettlementDiscrepancy[] {
  const at = (day: string) => localMidnight(day, timezone).toISOString();
  const missing = j.missing.map((d) =>
    finding('settlement_missing', `${currency}|${d.day}`, {
      posId: null,
      operationKey: `settlement:${currency}:${d.day}`,
      currency,
      occurredAt: at(d.day),
      values: {
        due_on: d.day,
        deadline: deadlineOf(d, rules),
        expected: d.amount.toString(),
        activity_from: d.firstActivity,
        activity_to: d.lastActivity,
      },
      evidence: [],
    }),
  );
  const unexpected = j.unexpected.map((c) =>
    finding('settlement_unexpected', c.id, {
      posId: c.accountId,
      operationKey: `bank:${c.id}`,
      currency,
      occurredAt: at(c.bookingDate),
      values: { amount: c.amount.toString(), booked_on: c.bookingDate, bank_ref: c.bankRef ?? '' },
      evidence: [c.id],
    }),
  );
  const matched = j.matches.flatMap((m) => matchFindings(currency, m, at));
  return [...missing, ...matched, ...unexpected].sort((a, b) => (a.id < b.id ? -1 : 1));
}

/**
 * A write-off's money paid since (recovered.ts): a finding of its own beside the written-off one, which stays
 * accepted as it was; named by it (its key, operation and account) and by the acceptance and the credits.
 */
export function recoveredFinding(
  currency: string,
  r: Recovery,
  row: DiscrepancyRow | undefined,
  open: ReadonlySet<string> = new Set(),
): SettlementDiscrepancy {
  const w = r.writeOff;
  if (w.type === 'settlement_unexpected') return gainTakenBackFinding(currency, r, row);
  // no credit paid it and its days are open again (the credit of a short taken back by the bank): the amount
  // written off is now part of what those days miss, in doubt on their own discrepancy; no money came
  const days = r.paidBy.length ? [] : [row?.values.due_on].flat().filter((d): d is string => typeof d === 'string');
  const owedAgain = days.filter((d) => open.has(d)).sort();
  return finding('settlement_recovered', w.discrepancyId, {
    ...writtenOffPlace(currency, r, row),
    values: {
      written_off_id: w.discrepancyId,
      written_off_type: w.type,
      written_off: w.amount.toString(),
      recovered: r.recovered.toString(),
      still_in_doubt: r.stillInDoubt.toString(),
      acceptance: w.acceptance,
      paid_on: r.paidOn,
      ...(owedAgain.length ? { owed_again_on: owedAgain } : {}),
    },
    evidence: [w.acceptance, ...r.paidBy],
  });
}

/** Where a finding on a write-off stands: the written-off discrepancy's account, operation key and time. */
const writtenOffPlace = (currency: string, r: Recovery, row: DiscrepancyRow | undefined) => ({
  posId: row?.pos_id ?? null,
  operationKey: row?.operation_key ?? `write_off:${r.writeOff.discrepancyId}`,
  currency,
  occurredAt: row?.occurred_at ?? null,
});

/**
 * A credit written off as a gain that is no longer unexpected (recovered.ts): it pays due days now (`due_on`),
 * or the bank took it back (`due_on` empty); the gain is taken back by `taken_back`. Named by the written-off
 * `settlement_unexpected` (its account, operation key, time, booking day and bank reference).
 */
function gainTakenBackFinding(currency: string, r: Recovery, row: DiscrepancyRow | undefined): SettlementDiscrepancy {
  const w = r.writeOff;
  const v = (row?.values ?? {}) as Record<string, unknown>;
  return finding('settlement_gain_taken_back', w.discrepancyId, {
    ...writtenOffPlace(currency, r, row),
    values: {
      written_off_id: w.discrepancyId,
      written_off: w.amount.toString(),
      taken_back: r.recovered.toString(),
      still_unexplained: r.stillInDoubt.toString(),
      acceptance: w.acceptance,
      due_on: r.dueOn,
      booked_on: typeof v.booked_on === 'string' ? v.booked_on : null,
      bank_ref: typeof v.bank_ref === 'string' ? v.bank_ref : '',
    },
    evidence: [w.acceptance, ...(row?.evidence ?? []), ...r.paidBy].filter((e, i, all) => all.indexOf(e) === i),
  });
}

/**
 * The discrepancy rows of the currencies synced so far in one batch, by currency then id: read from the table
 * once, then kept as written. `applyFindings` changes the map it is given in place (a new row added, a changed
 * one updated), and exactly those rows are written, so the map holds what a read would return, the same by
 * `sameJson` (the one comparison the lifecycle makes: ISO times, numbers, texts and arrays read back as
 * written, key order aside). Rows changed by a decision (`decideSettlementDiscrepancies`) are not followed:
 * the caller forgets the map after an append that carries one.
 */
export type DiscrepancyMemory = Map<string, Map<string, DiscrepancyRow>>;

/**
 * Brings the discrepancies of one currency to `now`, as of `by` (the last event of the append), with a
 * `settlement_recovered` beside each write-off no longer in doubt since (`recoveries`; `open`: the due days
 * open now, missing or in transit).
 */
export async function syncDiscrepancies(
  tx: Tx,
  schema: string,
  currency: string,
  now: readonly SettlementDiscrepancy[],
  by: RecordedEvent,
  memory: DiscrepancyMemory = new Map(),
  recoveries: readonly Recovery[] = [],
  open: ReadonlySet<string> = new Set(),
): Promise<void> {
  let rows = memory.get(currency);
  if (!rows) {
    rows = new Map((await readDiscrepancies(tx, schema, 'currency', [currency])).map((r) => [r.id, r]));
    memory.set(currency, rows);
  }
  const found = recoveries.length
    ? [...now, ...recoveries.map((r) => recoveredFinding(currency, r, rows.get(r.writeOff.discrepancyId), open))]
    : now;
  const lc = newLifecycle();
  applyFindings(lc, rows, found, { now: by.recordedAt.toISOString(), eventId: by.id });
  await writeDiscrepancies(tx, schema, [...lc.changed.values()], [...lc.changed.keys()]);
}

/** The table of the write-offs in force of recoverable types (recovered.ts), kept from the decisions. */
export const writeOffTable = (s: string): string =>
  `create table ${s}.write_offs (discrepancy_id uuid primary key, currency text not null, type text not null,
     acceptance uuid not null, amount numeric not null);`;

/** The write-offs in force of one currency, read once per batch (`memory`; forgotten after a decision). */
export async function writeOffsOf(
  tx: Tx,
  schema: string,
  currency: string,
  memory: Map<string, WriteOffInForce[]>,
): Promise<WriteOffInForce[]> {
  let held = memory.get(currency);
  if (!held) {
    const rows = await tx<{ discrepancy_id: string; type: string; acceptance: string; amount: bigint }[]>`
      select discrepancy_id::text, type, acceptance::text, amount from ${tx(schema)}.write_offs
      where currency = ${currency} order by discrepancy_id`;
    held = rows.map((r) => ({
      discrepancyId: r.discrepancy_id,
      type: r.type,
      acceptance: r.acceptance,
      amount: BigInt(r.amount),
    }));
    memory.set(currency, held);
  }
  return held;
}

/**
 * Applies the acceptances of an append, and their revocations, to the discrepancies they name (ids of other
 * legs are left); a revocation is stamped like the leg's other changes (the append's last event). Returns the
 * currencies to judge again in this append: of a discrepancy opened again, or of a write-off made or taken back
 * (its money may have come already: recovered.ts).
 */
export async function decideSettlementDiscrepancies(
  tx: Tx,
  schema: string,
  append: readonly RecordedEvent[],
): Promise<Set<string>> {
  const judge = new Set<string>();
  const by = append[append.length - 1]!;
  for (const e of append) {
    const accepted = isEvent(DiscrepancyAccepted, e) ? dataOf(DiscrepancyAccepted, e) : null;
    const revoked = isEvent(DiscrepancyAcceptanceRevoked, e) ? dataOf(DiscrepancyAcceptanceRevoked, e) : null;
    const id = accepted?.discrepancyId ?? revoked?.discrepancyId;
    if (id === undefined) continue;
    const [row] = await readDiscrepancies(tx, schema, 'id', [id]);
    const lc = newLifecycle();
    if (accepted) {
      recordAcceptance(lc, row, { ...accepted, eventId: e.id });
      const w = accepted.writeOff;
      if (lc.changed.has(id) && accepted.decision === 'write_off' && w && RECOVERABLE_TYPES.includes(w.type)) {
        await tx`insert into ${tx(schema)}.write_offs values (${id}, ${row!.currency ?? ''}, ${w.type}, ${e.id},
          ${accepted.amount ?? '0'})`;
        judge.add(row!.currency ?? '');
      }
    } else if (
      recordRevocation(lc, row, { ...revoked!, eventId: e.id }, { now: by.recordedAt.toISOString(), eventId: e.id })
    ) {
      await tx`delete from ${tx(schema)}.write_offs where discrepancy_id = ${id}`;
      judge.add(row!.currency ?? '');
    }
    await writeDiscrepancies(tx, schema, [...lc.changed.values()], [...lc.changed.keys()]);
  }
  return judge;
}

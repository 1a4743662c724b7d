import { DateTime } from 'luxon';
import { newEvent } from '../events/catalog';
import { PayoutRunUnpaidReleased } from '../events/payout-run-events';
import { checkText, NOTE_TEXT } from '../input-rules';
import type { Person } from '../people/directory';
import type { EventStore } from '../store/types';
import { allowed, append, runNamed } from './actions';
import { PayoutRunRefused } from './errors';
import type { BankDue, BankPaid } from './plan';
import { type PayoutRun, readRuns, releasedOf, runOf } from './runs';

/**
 * A sent run's transfers the bank rejected or paid only in part (docs/exceptions.md, "A sent run the bank did not
 * pay in full"). A sent run keeps its references taken, so what the bank did not pay was never asked again and
 * could only be paid by hand. A named person releases what is unpaid (PayoutRunUnpaidReleased), and the next
 * draft of the month pays it under the same reference: never twice, as what the bank paid stays taken, the
 * release is of what the bank's imported debits had not paid (less what came back, which a draft pays again
 * anyway), and a debit of the old transfer arriving after the rest was paid again is a `payout_duplicate`.
 */

export interface UnpaidLine {
  readonly reference: string;
  readonly currency: string;
  /** what the bank's debits have not paid of the line (minor units) */
  readonly amount: string;
  /** what the bank's debits paid on the reference, less returns, when read */
  readonly paid: string;
}

/**
 * What the bank's imported debits have not paid of each line of a run (pure). On a reference several standing
 * runs took (a reference paid lowered and raised since, or the rest of a release paid again), what the bank paid
 * and what came back is counted against the earliest runs first: an earlier run's debit never frees a later run's
 * transfer, nor a later run's pending transfer an earlier one.
 */
export function unpaidLinesOf(run: PayoutRun, payoutRuns: readonly PayoutRun[], paidByBank: BankPaid): UnpaidLine[] {
  const out: UnpaidLine[] = [];
  const upTo = new Map<string, bigint>();
  // what standing runs up to this one (in the order drafted) took of each reference, less what was released
  for (const r of payoutRuns) {
    if (r.status !== 'cancelled') {
      const released = releasedOf(r);
      for (const l of r.lines)
        upTo.set(l.reference, (upTo.get(l.reference) ?? 0n) + BigInt(l.amount) - (released.get(l.reference) ?? 0n));
    }
    if (r.id === run.id) break;
  }
  const released = releasedOf(run);
  for (const l of run.lines) {
    const ref = l.reference;
    const paid = paidByBank.get(ref) ?? 0n;
    const open = (upTo.get(ref) ?? 0n) - (paidByBank.returned?.get(ref) ?? 0n) - paid;
    const mine = BigInt(l.amount) - (released.get(ref) ?? 0n);
    const amount = open < mine ? open : mine;
    if (amount > 0n)
      out.push({ reference: ref, currency: l.currency, amount: amount.toString(), paid: paid.toString() });
  }
  return out;
}

/**
 * The day after which a sent transfer unpaid is the bank's evidence: the later of the payout's due day (issue day +
 * bank.payouts.dueDays) and the run's execution date + dueDays (a run sent after the due day still gets the bank's
 * window). Null: the payouts leg does not know the reference.
 */
export function unpaidPastDueAfter(run: PayoutRun, reference: string, due: BankDue): string | null {
  const dueOn = due.dueOn.get(reference);
  if (dueOn === undefined) return null;
  // a sent run was approved, and every approval names its execution date (PayoutRunApproved.executionDate)
  const executed = run.executionDate ?? dueOn;
  const window = DateTime.fromISO(executed, { zone: 'UTC' }).plus({ days: due.dueDays }).toISODate()!;
  return window > dueOn ? window : dueOn;
}

export interface ReleaseOptions {
  /** what the bank's debits paid (bank-paid.ts paidByBankOf, the payouts leg caught up first) */
  readonly paidByBank: BankPaid;
  /** the person says the bank will execute nothing more of the run's file (it rejected the transfers) */
  readonly bankDidNotExecute?: boolean;
  readonly now?: Date;
}

/**
 * Releases what the bank did not pay of a sent run, for a person who may draft runs: on their word that the bank
 * will execute nothing more of the file, or once every unpaid transfer is past its due window on the bank's
 * imported statements (they reach past it and show no debit). Recorded with the person, the reason and
 * each line's amount; refused when the bank paid all of it.
 */
export async function releaseUnpaid(
  store: EventStore,
  actor: Person,
  runId: string,
  reason: string,
  o: ReleaseOptions,
): Promise<{ run: PayoutRun; released: UnpaidLine[] }> {
  allowed(actor, 'payout-run.create');
  const runs = await readRuns(store);
  const run = runNamed(runs, runId);
  if (run.status !== 'sent')
    throw new PayoutRunRefused(
      'RUN_NOT_SENT',
      `${runId} is ${run.status}; only a sent run's unpaid transfers are released (a draft or an approved run is cancelled: recon payout-runs cancel ${runId} --reason ...)`,
    );
  const why = checkText(reason, NOTE_TEXT);
  if (!why.ok || why.value.trim() === '')
    throw new PayoutRunRefused('INVALID_INPUT', `--reason: ${why.ok ? 'must not be empty' : why.reason}`);
  const unpaid = unpaidLinesOf(run, [...runs.runs.values()], o.paidByBank);
  if (unpaid.length === 0)
    throw new PayoutRunRefused(
      'NOTHING_UNPAID',
      `${runId}: the bank's imported debits paid every transfer of it not released already (what came back is drafted again anyway); nothing to release`,
    );
  if (!o.bankDidNotExecute) notBeforeDue(run, unpaid, o.paidByBank.due);
  const releasedAt = (o.now ?? new Date()).toISOString();
  const data = {
    runId,
    releasedBy: actor.id,
    releasedAt,
    reason: why.value,
    ...(o.bankDidNotExecute ? { bankDidNotExecute: true as const } : {}),
    lines: unpaid,
  };
  const event = newEvent(PayoutRunUnpaidReleased, data, {
    idContent: { runId, step: 'unpaid-released', revision: runs.revision },
  });
  await append(store, runs, event);
  return { run: runOf(await readRuns(store), runId), released: unpaid };
}

/**
 * Without the person's word, each unpaid transfer must be past its due window on the bank's own statements: the
 * latest booking day imported on the payouts accounts of its currency is after the window, and no debit paid it.
 * Not the payouts leg's clock, which any event carrying a later time moves (a webhook), statements or not.
 */
function notBeforeDue(run: PayoutRun, unpaid: readonly UnpaidLine[], due: BankDue | undefined): void {
  const early = unpaid
    .map((l) => ({
      l,
      after: due ? unpaidPastDueAfter(run, l.reference, due) : null,
      booked: due?.bookedThrough.get(l.currency),
    }))
    .filter(({ after, booked }) => after === null || booked === undefined || booked <= after);
  if (early.length === 0) return;
  const named = early
    .map(({ l, after, booked }) => {
      const reach = booked ? `its statements reach ${booked}` : 'no statement of its payouts account imported';
      return after ? `${l.reference} (the bank's window runs to ${after}; ${reach})` : l.reference;
    })
    .join(', ');
  throw new PayoutRunRefused(
    'NOT_PAST_DUE',
    `${run.id}: ${named} not yet unpaid past its due window on the bank's imported statements: the bank may still ` +
      "pay it. Import the bank's statements past that day; or, if the bank will execute nothing more of the file " +
      '(it rejected the transfers), say so: --bank-did-not-execute',
  );
}

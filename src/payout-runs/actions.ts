import { DateTime } from 'luxon';
import type { BankConfig } from '../config/bank';
import { newEvent } from '../events/catalog';
import {
  PAYOUT_RUN_ID,
  PAYOUT_RUNS_STREAM,
  PayoutRunApproved,
  PayoutRunCancelled,
  PayoutRunDrafted,
  PayoutRunFileTaken,
  PayoutRunSent,
} from '../events/payout-run-events';
import { checkText, NOTE_TEXT } from '../input-rules';
import type { Person } from '../people/directory';
import { NotAllowed } from '../people/errors';
import { type Action, may } from '../people/roles';
import { StoreError } from '../store/errors';
import type { EventStore, NewEvent } from '../store/types';
import { debtorsFor } from './debtor';
import { PayoutRunRefused } from './errors';
import { builtOn, decisionsNow, laterRunsOf, openNowOf, payeeOf, planInputOf, statementRunsOf } from './inputs';
import { fileSha256, pain001 } from './pain001';
import { type BankPaid, linesAboveAsks, linesPaidSince, type Plan, planRun, linesInDoubt } from './plan';
import type { ResolvedNow } from './resolved';
import { type PayoutRun, type PayoutRuns, readRuns, runOf } from './runs';

/**
 * The life of a payout run (docs/exceptions.md, "Payout runs"): drafted by an analyst or approver, approved by
 * an approver who did not draft it (maker-checker), sent (the payment file handed to the bank, its sha-256
 * recorded), or cancelled before it is sent. Each reads the runs, checks who acts and the run's state, and appends
 * one event against the revision read: a concurrent change makes the append fail and nothing is half-applied.
 */

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** The acting person, allowed to do `action` (checked here as well as at each door). */
export function allowed(actor: Person, action: Action): void {
  if (!may(actor.role, action))
    throw new NotAllowed(
      'FORBIDDEN',
      `${actor.id} is ${/^[aeiou]/.test(actor.role) ? 'an' : 'a'} ${actor.role}; ${action} is not theirs`,
    );
}

/**
 * Appends at the revision read. Another person's action landing first (the revision moved, or the same step of
 * the same run already recorded by someone else: the ids are the run's and the step's) is refused as such, not
 * as a store failure: nothing of this action was written, and reading the run again shows what stands.
 */
export async function append(store: EventStore, runs: PayoutRuns, event: NewEvent): Promise<void> {
  try {
    await store.append(PAYOUT_RUNS_STREAM, [event], {
      expectedRevision: runs.revision < 0 ? 'no_stream' : runs.revision,
    });
  } catch (e) {
    if (e instanceof StoreError && (e.code === 'WRONG_EXPECTED_REVISION' || e.code === 'EVENT_ID_CONFLICT'))
      throw new PayoutRunRefused(
        'CHANGED_MEANWHILE',
        'the payout runs changed meanwhile (someone else acted at the same moment); nothing was written: read the run again',
      );
    throw e;
  }
}

export interface DraftResult {
  /** the run drafted now, or the month's draft already waiting (nothing appended); null: nothing to pay */
  readonly run: PayoutRun | null;
  readonly created: boolean;
  /** what was planned (for a run already waiting: what is left out and held, as of now) */
  readonly plan: Plan;
}

export interface DraftOptions {
  readonly month: string;
  readonly bank: BankConfig;
  /** where RECON_PAYOUTS_DEBTOR_NAME / _BIC (or RECON_ISSUER_NAME) are read from */
  readonly env: NodeJS.ProcessEnv;
  /**
   * What the bank's debits have paid on each reference, less returns (`paidByBankOf`, with the payouts read
   * model caught up): a reference the bank paid is not drafted again. Required, so that no caller drafts blind.
   */
  readonly paidByBank: BankPaid;
  /**
   * Which discrepancies the reconciliation finds resolved now (`resolvedNowOf`): money released on a decision
   * revoked since is paid when the sources agree now. None: a revoked decision keeps the money out.
   */
  readonly resolvedNow?: ResolvedNow;
  readonly now?: Date;
}

/**
 * Drafts the month's next run from its statements. Drafting again changes nothing: a draft already waiting for
 * the month is returned as it is, and what standing runs took is never planned again.
 */
export async function draftRun(store: EventStore, actor: Person, o: DraftOptions): Promise<DraftResult> {
  allowed(actor, 'payout-run.create');
  if (!MONTH.test(o.month))
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `--month: expected YYYY-MM, got ${JSON.stringify(o.month.slice(0, 20))}`,
    );
  const runs = await readRuns(store);
  const ofMonth = [...runs.runs.values()].filter((r) => r.month === o.month);
  const input = await planInputOf(store, o.month, [...runs.runs.values()], o.paidByBank, o.resolvedNow);
  const plan = planRun({ ...input, ...(o.bank.payouts.charset ? { charset: o.bank.payouts.charset } : {}) });
  const waiting = ofMonth.find((r) => r.status === 'draft');
  if (waiting) return { run: waiting, created: false, plan };
  if (plan.lines.length === 0) return { run: null, created: false, plan };
  const runId = `PR-${o.month}-${ofMonth.length + 1}`;
  const data = {
    runId,
    month: o.month,
    statementRuns: plan.statementRuns,
    lines: plan.lines,
    individualBooking: true as const,
    debtors: debtorsFor(
      plan.lines.map((l) => l.currency),
      o.bank,
      o.env,
    ),
    leftOut: plan.leftOut,
    releasedSinceStatement: plan.releasedSinceStatement,
    heldInForce: plan.heldInForce,
    draftedBy: actor.id,
    draftedAt: (o.now ?? new Date()).toISOString(),
  };
  await append(store, runs, newEvent(PayoutRunDrafted, data, { idContent: { runId, step: 'drafted' } }));
  return { run: runOf(await readRuns(store), runId), created: true, plan };
}

/**
 * What a waiting run pays must still be owed, to the account in force, as when it was drafted; otherwise it is
 * neither approved, filed nor sent, and cancelled, the month is drafted again: a released hold taken back since
 * (HOLD_IN_FORCE), a payee's account changed since (PAYEE_CHANGED), a correction that stated the month lower
 * (STATED_LOWER, below), the bank's debits paid it since (PAID_SINCE).
 */
async function stillPayable(store: EventStore, runs: PayoutRuns, run: PayoutRun, live: LiveReadings): Promise<void> {
  await noReleaseTakenBack(store, run, live.resolvedNow);
  await payeesUnchanged(store, run);
  await notStatedLower(store, runs, run);
  if (live.paidByBank) await notPaidSince(store, runs, run, live.paidByBank);
}

/** What the checks before approval, file and send read from the read models (each absent: not checked). */
export interface LiveReadings {
  /** DraftOptions `resolvedNow` */
  readonly resolvedNow?: ResolvedNow;
  /** DraftOptions `paidByBank`, with the payouts leg caught up */
  readonly paidByBank?: BankPaid;
}

/**
 * A run drafted before the bank's debits paid its references (a transfer made by hand, a run cancelled after its
 * file was executed, a return the bank took back) would pay them twice: a draft made now would leave them out.
 * Checked while nobody has taken its file; after that the bank may have executed it, and a debit may be its own.
 */
async function notPaidSince(store: EventStore, runs: PayoutRuns, run: PayoutRun, paidByBank: BankPaid) {
  if (run.fileTaken.length > 0) return;
  const paid = linesPaidSince(run, [...runs.runs.values()], await statementRunsOf(store, run.month), paidByBank);
  if (paid.length > 0)
    throw new PayoutRunRefused(
      'PAID_SINCE',
      `${run.id} pays ${paid.map((l) => l.reference).join(', ')}, which the bank's debits paid since it was ` +
        `drafted (by hand, or under another run); cancel it (recon payout-runs cancel ${run.id} --reason ...) ` +
        'and draft the month again: the draft pays what is still owed',
    );
}

/**
 * A run drafted before a correction stated the month lower (docs/bank.md, "A month stated lower") would pay a
 * reference more than it still asks: money the month no longer owes, or money now held.
 */
async function notStatedLower(store: EventStore, runs: PayoutRuns, run: PayoutRun): Promise<void> {
  const above = linesAboveAsks(run, [...runs.runs.values()], await statementRunsOf(store, run.month));
  if (above.length > 0)
    throw new PayoutRunRefused(
      'STATED_LOWER',
      `${run.id} pays ${above.map((l) => l.reference).join(', ')} more than the month's statements still ask ` +
        `(a correction stated the month lower since it was drafted); cancel it (recon payout-runs cancel ${run.id} ` +
        '--reason ...) and draft the month again',
    );
}

/**
 * A line pays money a statement released from hold because its discrepancy was decided pay or write-off. A
 * decision revoked or turned to withhold after the run was drafted puts that money in doubt again: a draft made
 * now would leave the line out (`hold_in_force`, plan.ts), so the waiting run is neither approved, filed nor sent;
 * unless the sources agree now (revoked, then resolved: `resolvedNow`), as a draft made now would pay it. Nor
 * one released as resolved whose discrepancy a later report opened again. Unless the latest statement holds it
 * again, this month's or a later one's: it took the money off already (`releasesInDoubt`).
 */
async function noReleaseTakenBack(store: EventStore, run: PayoutRun, resolvedNow?: ResolvedNow): Promise<void> {
  // each discrepancy's stream read once, however many lines it released money into
  const ids = run.lines.flatMap((l) => l.releasedHolds.map((h) => h.discrepancyId));
  if (ids.length === 0) return;
  const decisions = await decisionsNow(store, ids, resolvedNow);
  const openNow = await openNowOf(decisions, resolvedNow);
  const runs = await statementRunsOf(store, run.month);
  const held = linesInDoubt(
    {
      runs,
      before: await builtOn(store, run.month, runs),
      later: await laterRunsOf(store, run.month),
      payoutRuns: [],
      payees: new Map(),
      decisions,
      paidByBank: new Map(),
      openNow,
    },
    run.lines,
  );
  if (held.size > 0)
    throw new PayoutRunRefused(
      'HOLD_IN_FORCE',
      `${run.id} pays ${[...held].join(', ')} with money released from hold whose decision was revoked or turned ` +
        `to withhold, or whose discrepancy was opened again, since it was released (the money is in doubt again); cancel it (recon payout-runs cancel ${run.id} ` +
        '--reason ...) and draft the month again',
    );
}

/**
 * A run records each creditor's account when drafted. The directory naming another account since (the old one
 * closed, or wrong) means the transfer would go where the sub-merchant no longer wants it: neither approved,
 * filed nor sent; cancelled, the month is drafted again to the account in force. Nor is one whose account the
 * directory still names but no longer trusts (it replaced another since, e.g. back from a confirmed one, or the
 * run was drafted before confirmations existed): a draft made now would leave it out (payee_account_unconfirmed).
 */
async function payeesUnchanged(store: EventStore, run: PayoutRun): Promise<void> {
  const payees = new Map<string, Awaited<ReturnType<typeof payeeOf>>>();
  const changed: string[] = [];
  const unconfirmed: string[] = [];
  for (const l of run.lines) {
    // a sub-merchant's directory stream read once, whatever its currencies' lines
    if (!payees.has(l.subMerchantId)) payees.set(l.subMerchantId, await payeeOf(store, l.subMerchantId));
    const now = payees.get(l.subMerchantId);
    if (now?.payoutAccount !== l.creditorAccount || (now.payoutBic ?? undefined) !== l.creditorAgent)
      changed.push(l.reference);
    else if (now.accountConfirmed === false) unconfirmed.push(`${l.reference} (${l.subMerchantId})`);
  }
  if (changed.length > 0)
    throw new PayoutRunRefused(
      'PAYEE_CHANGED',
      `${run.id} pays ${changed.join(', ')} to a payout account the directory no longer names (changed since it ` +
        `was drafted); cancel it (recon payout-runs cancel ${run.id} --reason ...) and draft the month again`,
    );
  if (unconfirmed.length > 0)
    throw new PayoutRunRefused(
      'PAYEE_CHANGED',
      `${run.id} pays ${unconfirmed.join(', ')} to a payout account that replaced another in the directory and ` +
        'that no approver has confirmed (recon payout-runs confirm-payee SM-ID --account IBAN --note TEXT); ' +
        `confirm it, or cancel the run (recon payout-runs cancel ${run.id} --reason ...)`,
    );
}

export function runNamed(runs: PayoutRuns, id: string): PayoutRun {
  if (!PAYOUT_RUN_ID.test(id))
    throw new PayoutRunRefused('INVALID_INPUT', `run: expected PR-YYYY-MM-n, got ${JSON.stringify(id.slice(0, 40))}`);
  return runOf(runs, id);
}

const WEEKEND = [6, 7];
const isExecutionDay = (d: DateTime, holidays: ReadonlySet<string>) =>
  !WEEKEND.includes(d.weekday) && !holidays.has(d.toISODate()!);

/**
 * The day the bank is asked to execute: a business day of the payouts bank (banks execute credit transfers
 * Monday to Friday, and not on their holidays: a file asking such a day is rejected by some and moved by others,
 * so the date would not be the one approved), not before the day of approval in the business time zone nor more
 * than a year after it. Default: that day, or the next business day.
 */
function executionDateOf(
  asked: string | undefined,
  now: Date,
  timezone: string,
  holidays: ReadonlySet<string>,
): string {
  const day = DateTime.fromJSDate(now, { zone: timezone }).startOf('day');
  const today = day.toISODate()!;
  if (asked === undefined) {
    let d = day;
    while (!isExecutionDay(d, holidays)) d = d.plus({ days: 1 });
    return d.toISODate()!;
  }
  const d = DateTime.fromISO(asked, { zone: timezone });
  if (!/^\d{4}-\d{2}-\d{2}$/.test(asked) || !d.isValid || asked < today)
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `--execution-date (executionDate): expected a day (YYYY-MM-DD) from ${today} on, got ${JSON.stringify(asked.slice(0, 20))}`,
    );
  // banks take a transfer dated at most about a year ahead; a date past that is a year mistyped (2062 for 2026),
  // and a run dated so would never expire (EXECUTION_DATE_PASSED)
  const latest = day.plus({ years: 1 }).toISODate()!;
  if (asked > latest)
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `--execution-date (executionDate): ${asked} is more than a year ahead (at most ${latest}); banks execute transfers dated within a year`,
    );
  if (WEEKEND.includes(d.weekday))
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `--execution-date (executionDate): ${asked} is a ${d.setLocale('en').weekdayLong}; banks execute transfers Monday to Friday`,
    );
  if (holidays.has(asked))
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `--execution-date (executionDate): ${asked} is a bank holiday (bank.payouts.holidays, or bank.settlement.holidays when none); the bank executes no transfers on it`,
    );
  return asked;
}

/**
 * Approves a draft: an approver who did not draft it. Writes nothing to the bank; the payment file becomes
 * available. `executionDate` (YYYY-MM-DD, a business day not before the day of approval in `timezone`): the day
 * the bank is asked to execute the transfers; default the day of approval, or the next business day. `holidays`:
 * the payouts bank's (config/bank.ts `executionHolidays`); none: weekends alone.
 */
export async function approveRun(
  store: EventStore,
  actor: Person,
  runId: string,
  o: {
    timezone: string;
    executionDate?: string;
    now?: Date;
    holidays?: ReadonlySet<string>;
  } & LiveReadings,
): Promise<PayoutRun> {
  allowed(actor, 'payout-run.approve');
  const runs = await readRuns(store);
  const run = runNamed(runs, runId);
  if (run.status !== 'draft')
    throw new PayoutRunRefused('RUN_NOT_DRAFT', `${runId} is ${run.status}; only a draft is approved`);
  if (run.draftedBy === actor.id)
    throw new PayoutRunRefused(
      'MAKER_CHECKER',
      `${runId} was drafted by ${actor.id}; another approver must approve it (the one who drafts a run never approves it)`,
    );
  await stillPayable(store, runs, run, o);
  const now = o.now ?? new Date();
  const executionDate = executionDateOf(o.executionDate, now, o.timezone, o.holidays ?? new Set());
  const event = newEvent(
    PayoutRunApproved,
    { runId, approvedBy: actor.id, approvedAt: now.toISOString(), executionDate },
    { idContent: { runId, step: 'approved' } },
  );
  await append(store, runs, event);
  return runOf(await readRuns(store), runId);
}

export interface PaymentFile {
  readonly fileName: string;
  readonly xml: string;
  readonly sha256: string;
}

/** The payment file of an approved (or sent) run; refused for a draft or a cancelled run. */
export function paymentFileOf(run: PayoutRun): PaymentFile {
  if (run.status !== 'approved' && run.status !== 'sent')
    throw new PayoutRunRefused('RUN_NOT_APPROVED', `${run.id} is ${run.status}; its payment file exists once approved`);
  const xml = pain001({
    messageId: run.id,
    createdAt: run.approvedAt!,
    executionDate: run.executionDate!,
    debtors: run.debtors,
    lines: run.lines.map((l) => ({ ...l, amount: BigInt(l.amount) })),
    individualBooking: run.individualBooking === true,
  });
  return { fileName: `${run.id}.pain.001.001.09.xml`, xml, sha256: fileSha256(xml) };
}

/** When an action happens: the business time zone says which day it is. */
export interface ActionTime extends LiveReadings {
  readonly timezone: string;
  readonly now?: Date;
}

/**
 * An approved run whose execution date has passed is not handed to the bank: a bank rejects a requested date in
 * the past or moves it, so the transfers would not run on the day approved. Cancelling it frees its references
 * for a new draft, approved with a new date. A sent run's file stays readable (what went to the bank).
 */
function stillExecutable(run: PayoutRun, at: ActionTime): void {
  if (run.status !== 'approved' || run.executionDate === null) return;
  const today = DateTime.fromJSDate(at.now ?? new Date(), { zone: at.timezone }).toISODate()!;
  if (run.executionDate < today)
    throw new PayoutRunRefused(
      'EXECUTION_DATE_PASSED',
      `${run.id} asks the bank to execute on ${run.executionDate}, which has passed (today is ${today} in ${at.timezone}); ` +
        `cancel it (recon payout-runs cancel ${run.id} --reason ...) and draft the month again; if its file was taken, ` +
        "first import the bank's statements (a draft leaves out what the bank paid)",
    );
}

/**
 * The file of a run, for a person allowed to hand it to the bank (analyst, approver). Taking an approved run's
 * file is recorded (once per person): from then on the bank may execute it, and the run is cancelled only once
 * the bank's debits paid all of it, or on a named person's word that the bank will execute nothing of it (cancelRun).
 */
export async function paymentFile(
  store: EventStore,
  actor: Person,
  runId: string,
  at: ActionTime,
): Promise<PaymentFile> {
  allowed(actor, 'payout-run.send');
  // two people taking the file at one moment: the second reads again and records its own take
  for (let attempt = 1; ; attempt++) {
    const runs = await readRuns(store);
    const run = runNamed(runs, runId);
    stillExecutable(run, at);
    const file = paymentFileOf(run);
    if (run.status !== 'approved') return file;
    await stillPayable(store, runs, run, at);
    if (run.fileTaken.some((t) => t.by === actor.id)) return file;
    const takenAt = (at.now ?? new Date()).toISOString();
    const event = newEvent(
      PayoutRunFileTaken,
      { runId, takenBy: actor.id, takenAt, fileSha256: file.sha256 },
      { idContent: { runId, step: 'file-taken', by: actor.id } },
    );
    try {
      await append(store, runs, event);
      return file;
    } catch (e) {
      if (!(e instanceof PayoutRunRefused && e.code === 'CHANGED_MEANWHILE') || attempt >= 3) throw e;
    }
  }
}

/** Records that the approved run's file went to the bank, with the file's sha-256. */
export async function sendRun(store: EventStore, actor: Person, runId: string, at: ActionTime): Promise<PayoutRun> {
  allowed(actor, 'payout-run.send');
  const runs = await readRuns(store);
  const run = runNamed(runs, runId);
  if (run.status === 'sent')
    throw new PayoutRunRefused('RUN_ALREADY_SENT', `${runId} was sent by ${run.sentBy} at ${run.sentAt}`);
  stillExecutable(run, at);
  const now = at.now ?? new Date();
  const file = paymentFileOf(run);
  await stillPayable(store, runs, run, at);
  const event = newEvent(
    PayoutRunSent,
    { runId, sentBy: actor.id, sentAt: now.toISOString(), fileSha256: file.sha256 },
    { idContent: { runId, step: 'sent' } },
  );
  await append(store, runs, event);
  return runOf(await readRuns(store), runId);
}

/**
 * Cancels a draft, or an approved run not yet sent (e.g. its execution date passed); why is required; its
 * references can be drafted again. A run whose file was taken may be at the bank, marked sent or not: drafting
 * its references again would pay them twice if the bank executes it before its statement is imported (a draft
 * leaves out only what imported statements show paid). So it is cancelled once the bank's imported debits paid
 * every line of it in full, or when its cancelling person says the bank will execute nothing (more) of its file
 * (`bankDidNotExecute`, recorded with the cancellation).
 */
export async function cancelRun(
  store: EventStore,
  actor: Person,
  runId: string,
  reason: string,
  now = new Date(),
  opts: {
    /** the person says the bank did not execute the run's file (it rejected it, or confirmed so) */
    bankDidNotExecute?: boolean;
    /** whether the bank's imported debits paid every line of the run in full (bankPaidEveryLine) */
    bankPaidEveryLine?: (run: PayoutRun) => Promise<boolean>;
  } = {},
): Promise<PayoutRun> {
  allowed(actor, 'payout-run.create');
  const runs = await readRuns(store);
  const run = runNamed(runs, runId);
  if (run.status !== 'draft' && run.status !== 'approved')
    throw new PayoutRunRefused(
      'RUN_NOT_DRAFT',
      `${runId} is ${run.status}; only a draft or an approved run not yet sent is cancelled`,
    );
  const why = checkText(reason, NOTE_TEXT);
  if (!why.ok || why.value.trim() === '')
    throw new PayoutRunRefused('INVALID_INPUT', `--reason: ${why.ok ? 'must not be empty' : why.reason}`);
  const taken = run.fileTaken[0];
  const covered = taken !== undefined && !opts.bankDidNotExecute && (await opts.bankPaidEveryLine?.(run)) === true;
  if (taken && !opts.bankDidNotExecute && !covered)
    throw new PayoutRunRefused(
      'FILE_TAKEN',
      `${runId}'s payment file was taken by ${taken.by} at ${taken.at}: the bank may execute it, and drafting its ` +
        `payouts again would pay them twice. It is cancelled once the bank's imported statements show every ` +
        `transfer of it paid (execution date ${run.executionDate}); or, if the bank will execute nothing (more) ` +
        'of the file (it rejected it, or what it paid and what came back is imported), say so: --bank-did-not-execute',
    );
  const event = newEvent(
    PayoutRunCancelled,
    {
      runId,
      cancelledBy: actor.id,
      cancelledAt: now.toISOString(),
      reason: why.value,
      ...(taken && !covered ? { bankDidNotExecute: true as const } : {}),
    },
    { idContent: { runId, step: 'cancelled' } },
  );
  await append(store, runs, event);
  return runOf(await readRuns(store), runId);
}

/** Every run (newest first), for a person who may read. */
export async function listRuns(store: EventStore, actor: Person): Promise<PayoutRun[]> {
  allowed(actor, 'read');
  return [...(await readRuns(store)).runs.values()].reverse();
}

/** One run, for a person who may read. */
export async function showRun(store: EventStore, actor: Person, runId: string): Promise<PayoutRun> {
  allowed(actor, 'read');
  return runNamed(await readRuns(store), runId);
}

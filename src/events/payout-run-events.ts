import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * Payout runs (docs/exceptions.md, "Payout runs"): the statements' payouts of a month put together for one
 * payment file, drafted by one person, approved by another, then sent to the bank. One stream, `payout-runs`,
 * appended at the revision read (as `users` is): two people acting at once cannot both win on a stale view, a
 * run's number is taken once, and listing every run is one read. A run is a handful of events a month.
 *
 * Ids are deterministic (the run id and the step), so a retried command appends nothing new.
 */

export const PAYOUT_RUNS_STREAM = 'payout-runs';

/** `PR-<YYYY-MM>-<n>`: the n-th run of the month; also the payment file's message id (at most 35 characters). */
export const PAYOUT_RUN_ID = /^PR-\d{4}-(0[1-9]|1[0-2])-[1-9]\d{0,3}$/;

const isoInstant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO-8601 UTC instant');
const month = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/);
const minor = z.string().regex(/^\d+$/);
const currency = z.string().regex(/^[A-Z]{3}$/);
const runId = z.string().regex(PAYOUT_RUN_ID);
/** a user id (src/events/people-events.ts) */
const actor = z.string().min(1).max(64);
const account = z.string().regex(/^[A-Z0-9/-]{1,34}$/);

/** A hold of the statement run before, no longer held in the one a line pays: released into its amount. */
const releasedHold = z.object({
  discrepancyId: z.string(),
  amount: minor,
  /** the decision in force when the run was drafted ('resolved': no decision recorded, the sources explained it) */
  decision: z.enum(['pay', 'write_off', 'resolved']),
});

export const PayoutRunDrafted = defineEvent(
  'PayoutRunDrafted',
  1,
  z.object({
    runId,
    month,
    /** the StatementIssued events (ids) whose payouts the lines pay */
    statementRuns: z.array(z.uuid()),
    /** one transfer per sub-merchant, currency and statement reference: exactly what that reference asks */
    lines: z.array(
      z.object({
        subMerchantId: z.string().min(1),
        currency,
        amount: minor,
        reference: z.string().regex(/^[A-Z0-9-]{1,35}$/),
        /** the StatementIssued event the reference comes from */
        statementRun: z.uuid(),
        creditorName: z.string().min(1).max(140),
        creditorAccount: account,
        /** the creditor's bank (BIC) from the directory, when given (absent in runs drafted before it was kept) */
        creditorAgent: z
          .string()
          .regex(/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/)
          .optional(),
        releasedHolds: z.array(releasedHold),
        /** what the bank had sent back on the reference when drafted, paid again by this line (absent: nothing) */
        repaysReturned: minor.optional(),
        /**
         * what the bank's debits had paid on the reference when drafted, returns not taken off (absent: nothing, or
         * a run drafted before it was kept): money paid outside this run, which a later draft must not count as its
         */
        bankPaidBefore: minor.optional(),
      }),
    ),
    /**
     * the file asks the bank to book each transfer as its own debit (BtchBookg false), so each carries its
     * reference to the statement; absent in runs drafted before, whose file keeps the bytes it was sent with
     */
    individualBooking: z.literal(true).optional(),
    /** the account each currency is paid from and its holder, as configured when drafted (the file never changes) */
    debtors: z.array(z.object({ currency, account, name: z.string().min(1).max(140), bic: z.string().nullable() })),
    /** what the statements ask for but the file leaves out, and why (never silently) */
    leftOut: z.array(
      z.object({
        subMerchantId: z.string().min(1),
        currency,
        amount: minor,
        reference: z.string().nullable(),
        /**
         * hold_in_force: the amount carries a hold the statement released whose release was revoked or withheld
         * since; bad_iban: the payout account has an IBAN's form but not its check digits; no_bank_identifier: an
         * account that is not an IBAN with no BIC in the directory (no bank could route it); not_fileable: more
         * digits than a payment file's amount may have; no_name: neither legal name nor name has a printable character;
         * name_not_in_charset: the name has characters the file's character set (bank.payouts.charset) cannot write
         */
        reason: z.enum([
          'no_payout_account',
          'payee_account_unconfirmed',
          'not_whole_units',
          'not_registered',
          'hold_in_force',
          'bad_iban',
          'no_bank_identifier',
          'not_fileable',
          'no_name',
          'name_not_in_charset',
        ]),
      }),
    ),
    /** holds of the month's last statement whose discrepancy was decided pay or write-off since: paid once stated */
    releasedSinceStatement: z.array(
      z.object({ subMerchantId: z.string(), currency, discrepancyId: z.string(), amount: minor, decision: z.string() }),
    ),
    /** money the month's last statement holds and that stays held: not paid */
    heldInForce: z.array(z.object({ subMerchantId: z.string(), currency, discrepancyId: z.string(), amount: minor })),
    draftedBy: actor,
    draftedAt: isoInstant,
  }),
);

export const PayoutRunApproved = defineEvent(
  'PayoutRunApproved',
  1,
  z.object({
    runId,
    approvedBy: actor,
    approvedAt: isoInstant,
    /** the day the bank is asked to execute the transfers (ReqdExctnDt) */
    executionDate: z.iso.date(),
  }),
);

export const PayoutRunSent = defineEvent(
  'PayoutRunSent',
  1,
  z.object({
    runId,
    sentBy: actor,
    sentAt: isoInstant,
    /** sha-256 (hex) of the payment file as sent: the same bytes `recon payout-runs file` gives */
    fileSha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);

/**
 * A person took an approved run's payment file (the command line's `file`, the API's or the console's download):
 * from then on the bank may execute it, marked sent or not, so the run is not cancelled on one person's word
 * alone that nothing was paid (cancelRun). Once per person and run.
 */
export const PayoutRunFileTaken = defineEvent(
  'PayoutRunFileTaken',
  1,
  z.object({
    runId,
    takenBy: actor,
    takenAt: isoInstant,
    fileSha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);

export const PayoutRunCancelled = defineEvent(
  'PayoutRunCancelled',
  1,
  z.object({
    runId,
    cancelledBy: actor,
    cancelledAt: isoInstant,
    reason: z.string().trim().min(1).max(4000),
    /** its file had been taken: the person cancelling says the bank did not execute it (absent: not taken) */
    bankDidNotExecute: z.literal(true).optional(),
  }),
);

/**
 * A sent run's transfers the bank did not pay, or paid only in part, freed for a new run: what the bank's debits
 * had not paid of each line (less what came back) when a named person released it, on their word that the bank
 * will execute nothing more of the file (`bankDidNotExecute`) or once the payouts were still unpaid past their
 * due window (docs/exceptions.md, "A sent run the bank did not pay in full"). The run keeps what the bank paid;
 * a later debit of the old transfer after the rest was paid again shows as a duplicate.
 */
export const PayoutRunUnpaidReleased = defineEvent(
  'PayoutRunUnpaidReleased',
  1,
  z.object({
    runId,
    releasedBy: actor,
    releasedAt: isoInstant,
    reason: z.string().trim().min(1).max(4000),
    /** the person says the bank will execute nothing more of the file (absent: the payouts were past due unpaid) */
    bankDidNotExecute: z.literal(true).optional(),
    /** per line released: its reference, what was released (no longer taken by the run), what the bank had paid */
    lines: z
      .array(z.object({ reference: z.string().regex(/^[A-Z0-9-]{1,35}$/), currency, amount: minor, paid: minor }))
      .min(1),
  }),
);

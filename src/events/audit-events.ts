import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * Decisions that move money on one discrepancy (docs/exceptions.md). Stream:
 *   discrepancy-<id>   its acceptances and their revocations, in turn: an acceptance is appended at the
 *                      revision read (the first with 'no_stream'), so two acceptances never both land.
 * The work around a decision (assignment, comments, proposals waiting for a second person) is in the
 * exception's own stream (exception-events.ts); only a decision in force is written here.
 * The projection applies them in commit order like every other event, so a replay keeps them.
 */

export const discrepancyStream = (discrepancyId: string) => `discrepancy-${discrepancyId}`;

/** What an acceptance decides about the money in doubt. */
export const DECISIONS = ['pay', 'withhold', 'write_off'] as const;
export type Decision = (typeof DECISIONS)[number];

const isoInstant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO-8601 UTC instant');

export const DiscrepancyAccepted = defineEvent(
  'DiscrepancyAccepted',
  1,
  z.object({
    discrepancyId: z.uuid(),
    /** why the difference is acceptable (required, never empty) */
    note: z.string().trim().min(1).max(4000),
    /** who decided (required) */
    acceptedBy: z.string().trim().min(1).max(200),
    acceptedAt: isoInstant,
    /**
     * For a discrepancy whose money is held on the statements (HOLDING_TYPES): pay it on the next statement,
     * or keep withholding it. Absent (acceptances recorded before decisions were asked for): pay.
     * `write_off`: the company absorbs the amount in doubt (an adjusting journal entry to the configured
     * write-off account) and the hold is released.
     */
    decision: z.enum(DECISIONS).optional(),
    /**
     * the amount in doubt when it was accepted (minor units), frozen with the values; absent when none is known.
     * Up to 30 digits, as the column it is read from (numeric): a settlement day of many large sales has 20
     */
    amount: z
      .string()
      .regex(/^\d{1,30}$/, 'minor units')
      .optional(),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'ISO 4217 code')
      .optional(),
    /**
     * A `pay` or `write_off` under a `payment` hold rule: the payment it released (minor units, decisions.ts
     * `releasedBy`, the proposal's `released` for an approval). The statements hold the payment's growth above
     * it. Absent (other rules, or accepted before it was recorded): the payment's whole current net is released,
     * as then.
     */
    released: z
      .string()
      .regex(/^\d{1,19}$/, 'minor units')
      .optional(),
    /**
     * With `released`: the receivers' shares of that payment as its person saw them (decisions.ts `splitSeen`, summed),
     * the journal's measure the statements weigh the payment's growth in. Absent (no shares stated, or accepted
     * before it was recorded): the growth is weighed against `released`, as then.
     */
    releasedShares: z
      .string()
      .regex(/^\d{1,19}$/, 'minor units')
      .optional(),
    /**
     * With `releasedShares`: those shares by receiver name (decisions.ts `splitSeen`), so that each receiver's
     * statement holds its own growth. Absent: the payment's growth is weighed whole, as then.
     */
    releasedSplit: z.record(z.string(), z.string().regex(/^\d{1,19}$/, 'minor units')).optional(),
    /**
     * What a `write_off` books (docs/ledger.md, "Write-offs"), decided when it is accepted so that a replay books
     * the same whatever the settings then: `amount` in `currency` to `account` against `against` (a gain the
     * other way round), the discrepancy's type, and the payment it concerns (null: none).
     */
    writeOff: z
      .object({
        type: z.string().min(1).max(100),
        account: z.string().min(1).max(200),
        against: z.string().min(1).max(300),
        receiverName: z.string().max(500).nullable(),
        gain: z.boolean(),
        posId: z.string().max(500).nullable(),
        paymentId: z.string().max(500).nullable(),
      })
      .optional(),
  }),
);

/**
 * An acceptance taken back (a decision revoked, or new evidence): the discrepancy is open again, its money held
 * again if its type holds money, and any adjusting entry of a write-off reversed.
 */
export const DiscrepancyAcceptanceRevoked = defineEvent(
  'DiscrepancyAcceptanceRevoked',
  1,
  z.object({
    discrepancyId: z.uuid(),
    /** the DiscrepancyAccepted event taken back */
    acceptance: z.uuid(),
    reason: z.string().trim().min(1).max(4000),
    revokedBy: z.string().trim().min(1).max(200),
    revokedAt: isoInstant,
  }),
);

import { z } from 'zod';
import { DECISIONS } from './audit-events';
import { defineEvent } from './catalog';

/**
 * The work on one exception (a discrepancy of any leg seen as work for a team; docs/exceptions.md). Stream:
 *   exception-<discrepancyId>   assignment, comments, hand resolution, proposals and their approval or
 *                               rejection, reopening; appended at the revision read, so two people acting at
 *                               once on a stale view cannot both win.
 * A decision in force (an acceptance) and its revocation are not here but in `discrepancy-<id>`
 * (audit-events.ts): the legs' read models apply those. Every event names its person: the user id of the
 * token that acted (src/people), never free text.
 */

export const exceptionStream = (discrepancyId: string) => `exception-${discrepancyId}`;

const isoInstant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO-8601 UTC instant');
/** a user id (src/people/manage.ts USER_ID), or `auditor-token` */
const person = z.string().regex(/^[a-z][a-z0-9._-]{0,63}$/);
const text = z.string().trim().min(1).max(4000);

/** Why an exception was resolved by hand (the sources still disagree, and that is fine). */
export const HAND_REASONS = ['explained_elsewhere', 'duplicate', 'timing', 'corrected_at_source', 'other'] as const;
export type HandReason = (typeof HAND_REASONS)[number];

export const ExceptionAssigned = defineEvent(
  'ExceptionAssigned',
  1,
  z.object({
    discrepancyId: z.uuid(),
    assignee: person,
    /** when it is due: by default the SLA of its severity at detection (src/exceptions/severity.ts dueAt) */
    dueAt: isoInstant.nullable(),
    /** why (a bulk assignment's reason); absent for a plain assignment */
    note: text.optional(),
    by: person,
    at: isoInstant,
  }),
);

export const ExceptionCommented = defineEvent(
  'ExceptionCommented',
  1,
  z.object({ discrepancyId: z.uuid(), text, by: person, at: isoInstant }),
);

export const ExceptionResolvedByHand = defineEvent(
  'ExceptionResolvedByHand',
  1,
  z.object({
    discrepancyId: z.uuid(),
    reasonCode: z.enum(HAND_REASONS),
    note: text,
    /** the discrepancy's updated_by_event when resolved: sources that change it later reopen the exception */
    evidence: z.uuid(),
    by: person,
    at: isoInstant,
  }),
);

export const ExceptionDecisionProposed = defineEvent(
  'ExceptionDecisionProposed',
  1,
  z.object({
    discrepancyId: z.uuid(),
    proposal: z.uuid(),
    /** absent: an acceptance without a decision (a type that holds no money) */
    decision: z.enum(DECISIONS).optional(),
    note: text,
    /** the amount in doubt, minor units as a decimal string; null when the discrepancy concerns no amount */
    amountInDoubt: z.string().regex(/^\d+$/).nullable(),
    currency: z.string().nullable(),
    /**
     * a pay: what it releases on the statements (decisions.ts `releasedBy`; the whole payment under a `payment`
     * hold rule, a write-off's too), minor units; an approval signs this release, not another. Absent: not a pay
     * or such a write-off, or proposed before
     */
    released: z.string().regex(/^\d+$/).optional(),
    /** a second person must approve it (a write-off above the configured amount); false: in force at once */
    needsApproval: z.boolean(),
    by: person,
    at: isoInstant,
  }),
);

export const ExceptionDecisionApproved = defineEvent(
  'ExceptionDecisionApproved',
  1,
  z.object({ discrepancyId: z.uuid(), proposal: z.uuid(), note: text, by: person, at: isoInstant }),
);

export const ExceptionDecisionRejected = defineEvent(
  'ExceptionDecisionRejected',
  1,
  z.object({ discrepancyId: z.uuid(), proposal: z.uuid(), note: text, by: person, at: isoInstant }),
);

export const ExceptionReopened = defineEvent(
  'ExceptionReopened',
  1,
  z.object({ discrepancyId: z.uuid(), reason: text, by: person, at: isoInstant }),
);

export const EXCEPTION_EVENTS = [
  ExceptionAssigned,
  ExceptionCommented,
  ExceptionResolvedByHand,
  ExceptionDecisionProposed,
  ExceptionDecisionApproved,
  ExceptionDecisionRejected,
  ExceptionReopened,
] as const;

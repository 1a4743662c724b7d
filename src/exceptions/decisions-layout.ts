import { HAND_REASONS } from '../events/exception-events';
import { DECISIONS } from '../events/audit-events';
import { ACTION_REQUESTS } from './actions';

/**
 * The Decisions sheet's layout, one for both ends (docs/exceptions.md, "Offline decisions"): the nightly
 * workbook writes it (src/export/nightly/decisions-sheet.ts) and `recon exceptions import` reads it back.
 * The columns to fill in, then the columns that only say what the exception is (the import passes them by,
 * so a sheet may carry them however they were edited).
 */

export const DECISIONS_SHEET = 'Decisions';

/** The columns the import acts on, in the order the nightly sheet writes them. */
export const DECISION_COLUMNS = ['id', 'action', 'assignee', 'due', 'reason_code', 'decision', 'note'] as const;
export type DecisionColumn = (typeof DECISION_COLUMNS)[number];

/** The columns that describe the exception, for the person filling the sheet in; never read back. */
export const DECISION_INFO_COLUMNS = [
  'leg',
  'type',
  'state',
  'severity',
  'due_at',
  'assigned_to',
  'sub_merchant',
  'currency',
  'amount_in_doubt',
  'what_differs',
] as const;

/**
 * What each row showed, exactly, for the import to hold its decision to (written hidden: a person leaves them):
 * the amount in doubt in minor units (the shown `amount_in_doubt` is a money cell, a float in the file) and its
 * currency, the proposal waiting, the decision in force. An accept, approve, reject or reopen row is refused when
 * the exception is no longer that: the sheet is read a day after it was written.
 */
export const DECISION_SEEN_COLUMNS = [
  'seen_amount_in_doubt',
  'seen_currency',
  'seen_proposal',
  'seen_acceptance',
] as const;
export type DecisionSeenColumn = (typeof DECISION_SEEN_COLUMNS)[number];

/** What each fill-in column accepts, where it is a list (the sheet offers these in a drop-down). */
export const DECISION_CHOICES: Partial<Record<DecisionColumn, readonly string[]>> = {
  action: ACTION_REQUESTS,
  reason_code: HAND_REASONS,
  decision: DECISIONS,
};

import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * Events written by auditors (recon discrepancies accept). Stream:
 *   discrepancy-<id>   decisions about one discrepancy; the first event is its acceptance, so
 *                      appending with expectedRevision 'no_stream' refuses a second acceptance.
 * The projection applies them in commit order like every other event, so a replay keeps them.
 */

export const discrepancyStream = (discrepancyId: string) => `discrepancy-${discrepancyId}`;

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
     */
    decision: z.enum(['pay', 'withhold']).optional(),
  }),
);

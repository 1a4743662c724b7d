import { z } from 'zod';
import { defineEvent } from './catalog';
import { minorString } from './ingest-events';

/**
 * The marketplace's intent (issue 17): its orders and the fee contract with the PSP. Streams:
 *   order-<orderId>          every version of one order: placed, amended (at a time), cancelled
 *   fee-contract-<subId>     the fee schedule lines of one sub-merchant (`*`: the default schedule)
 *
 * An order's versions are new events, never edits. Ids come from what names the version (the order id for
 * the placement and the cancellation, the order id and the amendment time for an amendment), not from the
 * content: re-sending a version is a duplicate the store skips, and sending other values for the same
 * version is an error the store reports (EventIdConflictError), so nobody can edit a version in place.
 * Amounts are integer minor units as decimal strings; times ISO-8601 UTC instants with milliseconds.
 */

export const orderStream = (orderId: string) => `order-${orderId}`;
export const feeContractStream = (subMerchantId: string) => `fee-contract-${subMerchantId}`;
/** The sub-merchant id of the default fee schedule, for sub-merchants without one of their own. */
export const DEFAULT_SCHEDULE = '*';

const isoInstant = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO-8601 UTC instant');
const positiveMinor = minorString.refine((s) => BigInt(s) > 0n, 'a positive amount');

export const splitPart = z.object({ subMerchantId: z.string().min(1).max(100), amount: positiveMinor });
export type SplitPart = z.infer<typeof splitPart>;

const orderValues = {
  orderId: z.string().min(1).max(256),
  amount: positiveMinor,
  currency: z.string().regex(/^[A-Z]{3}$/),
  createdAt: isoInstant,
  /** the requested split; empty for an order the marketplace keeps whole */
  split: z.array(splitPart).max(100),
  customerReference: z.string().max(256).nullable(),
};

export const OrderPlaced = defineEvent('OrderPlaced', 1, z.object(orderValues));
export const OrderAmended = defineEvent('OrderAmended', 1, z.object({ ...orderValues, amendedAt: isoInstant }));
export const OrderCancelled = defineEvent(
  'OrderCancelled',
  1,
  z.object({ orderId: orderValues.orderId, cancelledAt: isoInstant }),
);

export type OrderPlacedData = z.infer<typeof OrderPlaced.schema>;
export type OrderAmendedData = z.infer<typeof OrderAmended.schema>;
export type OrderCancelledData = z.infer<typeof OrderCancelled.schema>;

export const ROUNDING_RULES = ['half_up', 'down'] as const;
export type RoundingRule = (typeof ROUNDING_RULES)[number];

/**
 * One line of the fee contract: from `effectiveFrom` (a day in RECON_TIMEZONE) the PSP may charge this
 * sub-merchant, per operation of `method` in `currency`, `percent` % of the part (an exact decimal, kept as
 * text and used as an integer ratio) rounded by `rounding`, plus `fixed` minor units; never more than the part.
 */
export const FeeScheduleLineSet = defineEvent(
  'FeeScheduleLineSet',
  1,
  z.object({
    subMerchantId: z.string().min(1).max(100),
    method: z.string().min(1),
    currency: z.string().regex(/^[A-Z]{3}$/),
    effectiveFrom: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    percent: z.string().regex(/^\d{1,3}(\.\d{1,6})?$/),
    fixed: minorString,
    rounding: z.enum(ROUNDING_RULES),
  }),
);
export type FeeScheduleLine = z.infer<typeof FeeScheduleLineSet.schema>;

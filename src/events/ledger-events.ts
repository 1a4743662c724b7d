import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * Events of the ledger side. Stream per sub-merchant: `sub-merchant-<id>`. The sub-merchant directory is
 * kept in the event log (not read from the CSV at projection time) so that projections stay a pure
 * function of the log and a replay gives the same journal.
 */

export const subMerchantStream = (subMerchantId: string) => `sub-merchant-${subMerchantId}`;

export const DEFAULT_RESERVE_HOLD_DAYS = 90;

export const SubMerchantRegistered = defineEvent(
  'SubMerchantRegistered',
  1,
  z.object({
    subMerchantId: z.string().min(1),
    /** exactly as the register's `receiverName` gives it (trimmed) */
    name: z.string().min(1),
    reserveHoldDays: z.number().int().min(0).max(3650),
    /** the account sub-merchant payouts are sent to (IBAN or account number, upper case, no spaces); optional */
    payoutAccount: z
      .string()
      .regex(/^[A-Z0-9]{5,34}$/)
      .optional(),
    /**
     * the BIC of the bank that holds `payoutAccount` (8 or 11 characters); a payout run names it as the creditor's
     * agent, and pays an account that is not an IBAN only with it (a bank cannot route it otherwise); optional
     */
    payoutBic: z
      .string()
      .regex(/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/)
      .optional(),
    /** where the sub-merchant's statements are e-mailed (recon statements send); optional */
    email: z.email().optional(),
    /** on statements (the register's `name` stays the matching key); optional */
    legalName: z.string().min(1).max(200).optional(),
    taxId: z.string().min(1).max(40).optional(),
    address: z.string().min(1).max(300).optional(),
    /** the language of its statements (unset: RECON_STATEMENT_LANGUAGE) */
    language: z.enum(['uk', 'en']).optional(),
  }),
);

/**
 * A named person confirms a sub-merchant's new payout account (and BIC) as the directory gives it: until then a
 * payout run pays no money to an account that replaced another (src/payout-runs/inputs.ts `payeeOf`), so a
 * changed directory file alone never redirects a payout. On the sub-merchant's stream.
 */
export const PayeeAccountConfirmed = defineEvent(
  'PayeeAccountConfirmed',
  1,
  z.object({
    subMerchantId: z.string().min(1),
    payoutAccount: z.string().regex(/^[A-Z0-9]{5,34}$/),
    payoutBic: z
      .string()
      .regex(/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/)
      .nullable(),
    confirmedBy: z.string().min(1),
    confirmedAt: z.iso.datetime(),
    /** how the change was checked (a call back to the sub-merchant, a signed letter) */
    note: z.string().min(1).max(2000),
  }),
);

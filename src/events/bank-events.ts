import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * Bank statements (src/ingest/bank/): what reached, or left, the marketplace's own bank accounts.
 * Stream per configured account: `bank-<accountId>`. Amounts are positive minor units as decimal strings;
 * `direction` says which way the money went. An entry's id comes from the account and the entry itself
 * (never from the statement that carried it), so an overlapping statement or a re-import adds nothing.
 */

export const bankAccountStream = (accountId: string) => `bank-${accountId}`;

/** The bank statement formats recon reads: every list of formats (type, parser table, CLI option) derives from it. */
export const BANK_FORMATS = ['camt.053', 'mt940', 'csv'] as const;
export type BankFormat = (typeof BANK_FORMATS)[number];

const minor = z.string().regex(/^\d+$/);
const signedMinor = z.string().regex(/^-?\d+$/);
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** One statement read whole and footed (opening + booked entries = closing). */
export const BankStatementImported = defineEvent(
  'BankStatementImported',
  1,
  z.object({
    accountId: z.string().min(1),
    currency: z.string().regex(/^[A-Z]{3}$/),
    /** the bank's statement id (camt `Stmt/Id`, MT940 `:20:`/`:28C:`, or the CSV mapping's) */
    statementId: z.string().min(1),
    format: z.enum(BANK_FORMATS),
    openingDate: day,
    closingDate: day,
    openingBalance: signedMinor,
    closingBalance: signedMinor,
    /** booked entries on the statement (pending ones are not booked) */
    entries: z.number().int().min(0),
    /** sha-256 of the file's bytes, to trace a figure back to the file */
    fileSha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);

/**
 * One booked movement. A batch entry (several transaction details under one booking) is one event per
 * detail: `batchRef` is the booking's reference and `detail` the detail's index (0 for a single entry).
 */
export const BankEntryBooked = defineEvent(
  'BankEntryBooked',
  1,
  z.object({
    accountId: z.string().min(1),
    currency: z.string().regex(/^[A-Z]{3}$/),
    direction: z.enum(['credit', 'debit']),
    amount: minor,
    bookingDate: day,
    valueDate: day.nullable(),
    /** the bank's own reference of the entry (camt `AcctSvcrRef`, MT940 bank reference), when given */
    bankRef: z.string().nullable(),
    batchRef: z.string().nullable(),
    detail: z.number().int().min(0),
    /** end-to-end id, or the customer reference the payer gave */
    endToEndId: z.string().nullable(),
    /** remittance information as one text (unstructured lines joined by a space; structured ref first) */
    remittance: z.string().nullable(),
    counterpartyName: z.string().nullable(),
    /** IBAN or account number of the other side */
    counterpartyAccount: z.string().nullable(),
    /** a return of an earlier payment (camt `RtrInf`, bank transaction code of a return, MT940 `?10` codes) */
    isReturn: z.boolean(),
    /** bank transaction code as the file gives it (camt domain/family/sub-family joined with '/', MT940 GVC) */
    transactionCode: z.string().nullable(),
    statementId: z.string().min(1),
    /**
     * Only on an entry of one transaction detail whose file states charges for it (camt `Chrgs` of the detail,
     * else of the entry), absent on every other entry (so their data, and what an import before them stored,
     * stay the same): the transfer's own amount (camt `TxDtls/AmtDtls/TxAmt`, null when not given) and the
     * charges as written. Whether a charge is folded into `amount` is the read models' reading
     * (src/reconciliation/bank-charges.ts, `foldedChargeOf`; docs/bank.md, "A charge folded into a transfer").
     */
    transactionAmount: minor.nullable().optional(),
    charges: z
      .array(
        z.object({
          amount: minor,
          currency: z
            .string()
            .regex(/^[A-Z]{3}$/)
            .nullable(),
          direction: z.enum(['credit', 'debit']).nullable(),
          /** camt `ChrgInclInd`: included in the entry's amount (true), not (false), not said (null) */
          included: z.boolean().nullable(),
        }),
      )
      .optional(),
  }),
);

/** A statement or entry for an account recon is not configured with: reported, never lost. */
export const BankEntryForUnknownAccount = defineEvent(
  'BankEntryForUnknownAccount',
  1,
  z.object({
    account: z.string().min(1),
    currency: z.string().nullable(),
    statementId: z.string().nullable(),
    file: z.string(),
    entries: z.number().int().min(0),
    fileSha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);

export const unknownBankAccountStream = 'bank-unknown-accounts';

import { z } from 'zod';
import { defineEvent } from './catalog';

/**
 * Statements issued (src/export/statements/issue.ts). Stream `statements-YYYY-MM`. The data is what makes the run
 * reproducible (month, zone, position, hash of the figures, file names), so the same statements issued again
 * at the same position are the same event and append nothing; the files' own sha-256 (their bytes carry zip
 * timestamps) and the time of issue are metadata.
 */

export const statementStream = (month: string) => `statements-${month}`;

export const StatementIssued = defineEvent(
  'StatementIssued',
  1,
  z.object({
    month: z.string().regex(/^\d{4}-\d{2}$/),
    timezone: z.string(),
    /** null: every sub-merchant of the month */
    subMerchantId: z.string().nullable(),
    /** event-store position the figures were cut at ("commit/prepare") */
    position: z.string().regex(/^\d+\/\d+$/),
    figuresSha256: z.string().regex(/^[0-9a-f]{64}$/),
    statements: z.number().int().min(0),
    files: z.array(z.string()),
    /**
     * What the run stated per receiver name and currency: [receiverName, currency, closing in minor units],
     * sorted. The next month opens at these (src/export/statements/previous.ts). Absent in runs recorded
     * before they were kept: their closings are read again from the journal at the run's cut.
     */
    closings: z.array(z.tuple([z.string(), z.string(), z.string().regex(/^-?\d+$/)])).optional(),
    /**
     * What the run asks finance to pay, per sub-merchant and currency (sorted): the statement number to put in
     * the transfer (`reference`), the statement's `amountDue` (holds excluded), what is `held` pending
     * investigation, and `payable`, the part of the amount due this reference asks for (a month issued again
     * asks only for the difference). Absent in runs recorded before payouts were expected
     * (docs/bank.md, "Payouts and holds").
     */
    payouts: z
      .array(
        z.object({
          subMerchantId: z.string().min(1),
          currency: z.string().regex(/^[A-Z]{3}$/),
          reference: z
            .string()
            .regex(/^[A-Z0-9-]{1,35}$/)
            .nullable(),
          amountDue: z.string().regex(/^-?\d+$/),
          held: z.string().regex(/^\d+$/),
          payable: z.string().regex(/^\d+$/),
          /**
           * on a correction of a month whose earlier runs asked this sub-merchant for money: what the month's runs
           * now ask in all (the amount due, at least 0). Below what they asked, it lowers their asks
           * (src/reconciliation/payouts/asks.ts). Absent on a month's first ask, and in runs recorded before it was kept.
           */
          stillAsked: z.string().regex(/^\d+$/).optional(),
          /**
           * what the sub-merchant owes back, carried to its next statement of the currency: the amount due negated,
           * when below 0 (what it owed from earlier statements and the month's movements exceed what it is owed).
           * The next statement takes it off its amount due (src/export/statements/payouts.ts). Absent when nothing
           * is owed back, on a statement for information and for a receiver not in the directory, and in runs
           * recorded before it was kept (they carried nothing).
           */
          owedBack: z.string().regex(/^\d+$/).optional(),
          /** what is held: [discrepancy id ('' for a receiver not in the directory), minor units], sorted */
          holds: z.array(z.tuple([z.string(), z.string().regex(/^\d+$/)])),
        }),
      )
      .optional(),
    /**
     * What the run printed of the issuer and whom to ask (RECON_ISSUER_*, RECON_STATEMENT_*): every later run of
     * the month (a reproduction, a correction) prints the month's first run's, so a statement never changes its
     * issuer, contact or dispute lines with the environment of the machine that happens to run it. Absent in runs
     * recorded before it was kept (the environment's are printed then).
     */
    settings: z
      .object({
        issuerName: z.string().optional(),
        issuerAddress: z.string().optional(),
        issuerTaxId: z.string().optional(),
        contact: z.string().optional(),
        dispute: z.string().optional(),
        language: z.enum(['en', 'uk']),
      })
      .optional(),
  }),
);

/**
 * A statement's number: sequential per sub-merchant, stream `statement-numbers-<subMerchantId>`. The id comes
 * from the run (the StatementIssued event's id) and the sub-merchant, so a run issued again at the same cut
 * finds its number instead of taking the next one; appends expect the stream's revision, so two runs never
 * take one number.
 */
export const statementNumberStream = (subMerchantId: string) => `statement-numbers-${subMerchantId}`;

export const StatementNumbered = defineEvent(
  'StatementNumbered',
  1,
  z.object({
    subMerchantId: z.string().min(1),
    number: z.number().int().min(1),
    month: z.string().regex(/^\d{4}-\d{2}$/),
    /** the StatementIssued event of the run */
    run: z.string().min(1),
  }),
);

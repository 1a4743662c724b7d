import { z } from 'zod';
import { configObject, issueLines } from './strict';
import { writeOffAccountProblem } from './write-off';

/**
 * The `exceptions` section of RECON_CONFIG (docs/exceptions.md, "Severity, due dates and write-offs"): every
 * field optional; what is left out keeps its default (src/exceptions/severity.ts DEFAULT_EXCEPTION_POLICY,
 * merged by src/exceptions/policy.ts). Amounts are whole minor units, as a string or a whole number:
 *   "exceptions": { "amountAtLeast": { "medium": "50000" }, "ageHoursAtLeast": { "high": 96 },
 *                   "slaHours": { "critical": 8 },
 *                   "writeOff": { "account": "expense:write-offs", "approvalAbove": "100000",
 *                                 "approvalAboveByCurrency": { "EUR": "5000" } },
 *                   "pay": { "approvalAbove": "100000", "approvalAboveByCurrency": { "EUR": "5000" } } }
 * `pay.approvalAbove` null: a release of held money never needs a second person.
 */

// one message, without the limit's 16 digits: zod gave two for one number, and the log's card-number scrubber
// printed its 9007199254740991 as 900719******0991
const BEYOND_NUMBER = 'expected whole minor units: a JSON number up to 2^53 − 1, or a string of up to 18 digits';
const minor = z
  .union([
    z.string().regex(/^\d{1,18}$/, 'expected whole minor units'),
    z.number({ error: BEYOND_NUMBER }).int({ error: BEYOND_NUMBER }).min(0, { error: BEYOND_NUMBER }),
  ])
  .transform((v) => BigInt(v));
const hours = z
  .number()
  .int()
  .min(0)
  .max(24 * 3650);

export const exceptionsConfigSchema = configObject({
  amountAtLeast: configObject({ medium: minor, high: minor, critical: minor }).partial().optional(),
  // a currency's own thresholds over amountAtLeast: 100000 minor units is 1,000.00 UAH and 1,000.00 EUR alike
  amountAtLeastByCurrency: z
    .record(
      z.string().regex(/^[A-Z]{3}$/, 'expected a currency code (EUR)'),
      configObject({ medium: minor, high: minor, critical: minor }).partial(),
    )
    .optional(),
  ageHoursAtLeast: configObject({ medium: hours, high: hours, critical: hours }).partial().optional(),
  slaHours: configObject({ low: hours, medium: hours, high: hours, critical: hours }).partial().optional(),
  writeOff: configObject({
    account: z.string().superRefine((name, ctx) => {
      const problem = writeOffAccountProblem(name);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    approvalAbove: minor,
    // a currency's own limit: 100000 minor units is 1,000.00 UAH and 1,000.00 EUR alike
    approvalAboveByCurrency: z.record(z.string().regex(/^[A-Z]{3}$/, 'expected a currency code (EUR)'), minor),
  })
    .partial()
    .optional(),
  pay: configObject({
    approvalAbove: minor.nullable(),
    approvalAboveByCurrency: z.record(z.string().regex(/^[A-Z]{3}$/, 'expected a currency code (EUR)'), minor),
  })
    .partial()
    .optional(),
});

/** The section as configured: only what the file sets. */
export type ExceptionsConfig = z.infer<typeof exceptionsConfigSchema>;

/** The section parsed, or its problems (field paths, never values). Absent: nothing overridden. */
export function exceptionsConfigFrom(raw: unknown): { config: ExceptionsConfig; issues: string[] } {
  if (raw === undefined) return { config: {}, issues: [] };
  const parsed = exceptionsConfigSchema.safeParse(raw);
  if (!parsed.success) return { config: {}, issues: issueLines('exceptions', parsed.error.issues) };
  return { config: parsed.data, issues: [] };
}

import { UsageError } from './errors';

/**
 * `recon demo`'s options checked before anything is opened (each refusal a usage error naming the option).
 * A month of 1,000,000 payments is an ordinary large marketplace's: the sandbox generates it order by order
 * (src/sandbox/scenario.ts), so the cap is about run time, not memory.
 */
export const MAX_DEMO_PAYMENTS = 1_000_000;

export interface DemoCommandOptions {
  readonly seed: string;
  readonly payments: string;
  readonly month?: string;
  readonly out: string;
  readonly json?: boolean;
}

export interface ParsedDemoOptions {
  readonly seed: string;
  readonly payments: number;
  readonly month?: string;
}

export function parseDemoOptions(opts: DemoCommandOptions): ParsedDemoOptions {
  const payments = Number(opts.payments);
  if (!Number.isInteger(payments) || payments < 1 || payments > MAX_DEMO_PAYMENTS)
    throw new UsageError(`--payments: expected 1..${MAX_DEMO_PAYMENTS}, got ${opts.payments}`);
  if (opts.month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.month))
    throw new UsageError(`--month: expected YYYY-MM, got ${opts.month}`);
  return { seed: opts.seed, payments, ...(opts.month !== undefined ? { month: opts.month } : {}) };
}

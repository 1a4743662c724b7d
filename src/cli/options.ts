import { DateTime } from 'luxon';
import { ensureOutDir } from '../export/out-dir';
import { plausibleDay } from '../input-rules';
import type { MoneySeen } from '../exceptions/actions';
import { UsageError } from './errors';

/**
 * Option values checked before anything is opened, each refusal a usage error (exit 2) naming the option:
 * a date must be a day of the calendar, not only have its shape (2025-02-30 has it).
 */

export function calendarDay(option: string, value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || !DateTime.fromISO(value, { zone: 'UTC' }).isValid) {
    throw new UsageError(`${option}: expected a day of the calendar (YYYY-MM-DD), got ${JSON.stringify(value)}`);
  }
  // the shared rule for days at a door: 0001-01-01 reached PostgreSQL as year 0 and failed as INTERNAL
  const plausible = plausibleDay(value);
  if (!plausible.ok) throw new UsageError(`${option}: ${plausible.reason}`);
  return value;
}

/** A month (YYYY-MM) whose first day is a plausible day: 1999-12 was issued and recorded, 0000-01 failed INTERNAL. */
export function plausibleMonth(option: string, value: string): string {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value))
    throw new UsageError(`${option}: expected YYYY-MM, got ${JSON.stringify(value)}`);
  const plausible = plausibleDay(`${value}-01`);
  if (!plausible.ok)
    throw new UsageError(`${option}: ${value} is outside the months recon reads (${plausible.reason})`);
  return value;
}

export function positiveWhole(option: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${option}: expected a whole number ≥ 1, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * An output directory option (`--out`), made when missing and checked writable before the database starts:
 * a file, or a place where nothing can be written, is a usage error naming the option.
 */
export function outDirOption(option: string, value: string): string {
  // its refusal (OutputDirectoryError) is a usage error naming the option
  return ensureOutDir(value, option);
}

/**
 * `--amount-in-doubt`/`--currency` of `recon exceptions accept` and `recon discrepancies accept`: the money the
 * person saw (`recon exceptions show`), when they name it. The decision is taken on that or refused, as the
 * console's form binds it. Both options or neither: an amount without its currency is not what was shown.
 */
export function moneySeenOf(o: { amountInDoubt?: string; currency?: string }): { seen?: MoneySeen } {
  if (o.amountInDoubt === undefined && o.currency === undefined) return {};
  if (o.amountInDoubt === undefined)
    throw new UsageError('--currency: goes with --amount-in-doubt (the amount in doubt you saw, or none)');
  if (o.currency === undefined)
    throw new UsageError('--currency: required with --amount-in-doubt (the currency you saw, or none)');
  const amount = o.amountInDoubt === 'none' ? null : o.amountInDoubt;
  if (amount !== null && !/^-?\d{1,18}$/.test(amount))
    throw new UsageError('--amount-in-doubt: expected whole minor units (e.g. 41000 for 410.00), or none');
  const currency = o.currency === 'none' ? null : o.currency;
  if (currency !== null && !/^[A-Z]{3}$/.test(currency))
    throw new UsageError('--currency: expected a three-letter currency code (e.g. UAH), or none');
  return { seen: { amountInDoubt: amount, currency } };
}

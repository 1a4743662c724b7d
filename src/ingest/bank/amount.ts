import { maskPans } from '../../input-rules';
import { MAX_MINOR } from '../../money';

/**
 * Amounts of bank files to minor units, by the text alone (never a float). Every currency has two decimals
 * here, as in the rest of recon: a third decimal is accepted only when it is 0.
 */

const MAX_INTEGER_DIGITS = 15;
const POINT = /^(\d+)(?:\.(\d*))?$/;
const COMMA = /^(\d+)(?:,(\d*))?$/;

/**
 * `text` is an unsigned decimal with `.` or `,` as its decimal separator (`separator`); thousands
 * separators are not accepted (a bank file never has them; a CSV mapping strips them first).
 * Returns the minor units, or a reason.
 */
export function minorUnits(text: string, separator: '.' | ','): bigint | string {
  const t = text.trim();
  const m = (separator === '.' ? POINT : COMMA).exec(t);
  if (!m)
    return `not an amount: ${JSON.stringify(maskPans(t).slice(0, 40))} (digits with "${separator}" as decimal separator)`;
  const whole = m[1]!.replace(/^0+(?=\d)/, '');
  if (whole.length > MAX_INTEGER_DIGITS) return `amount too large: ${maskPans(t).slice(0, 40)}`;
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (fraction.length > 2) return `more than two decimals: ${maskPans(t).slice(0, 40)}`;
  const minor = BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0'));
  // every door's largest amount (src/money.ts): one beyond had the nightly report and the statements refuse it
  // on every run after (a workbook holds 15 significant digits exactly), where the file could still be fixed
  if (minor > MAX_MINOR) return `amount too large: ${maskPans(t).slice(0, 40)} (at most ${formatMinor(MAX_MINOR)})`;
  return minor;
}

/** Signed: a leading `-` (CSV); bank formats say the sign with a credit/debit mark instead. */
export function signedMinorUnits(text: string, separator: '.' | ','): bigint | string {
  const t = text.trim();
  const negative = t.startsWith('-');
  const v = minorUnits(negative || t.startsWith('+') ? t.slice(1) : t, separator);
  return typeof v === 'string' ? v : negative ? -v : v;
}

/** "1234.50" from 123450n: for messages and writers. */
export function formatMinor(v: bigint, separator: '.' | ',' = '.'): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  return `${neg ? '-' : ''}${a / 100n}${separator}${(a % 100n).toString().padStart(2, '0')}`;
}

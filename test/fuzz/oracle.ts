import fc from 'fast-check';

/**
 * An independent decimal oracle for the PSP's amounts, on string arithmetic only (no regex shared with
 * src/money.ts, no BigInt, no Number): plain decimal notation, optional leading '-', at most two
 * decimals, surrounding JSON whitespace allowed, at most MAX (10^15 minor units).
 * Returns the minor units as a canonical decimal string ("-0" never appears), or null when refused.
 */
const DIGITS = '0123456789';

/** Text PostgreSQL cannot store in jsonb or text: U+0000, or a surrogate half without its other half. */
export const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MAX_MINOR_TEXT = '1' + '0'.repeat(15);

function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (const ch of s) if (!DIGITS.includes(ch)) return false;
  return true;
}

/** Compares two canonical non-negative integer strings. */
function cmp(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function stripZeros(s: string): string {
  let i = 0;
  while (i < s.length - 1 && s[i] === '0') i++;
  return s.slice(i);
}

const WS =
  ' \t\n\r\v\f\u00a0\ufeff\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** String.prototype.trim's whitespace set, written out by hand. */
function trimWs(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && WS.includes(s[a]!)) a++;
  while (b > a && WS.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

export function oracleMinor(text: string, opts: { allowNegative?: boolean } = {}): string | null {
  let t = trimWs(text);
  let negative = false;
  if (t.startsWith('-')) {
    negative = true;
    t = t.slice(1);
  }
  const dot = t.indexOf('.');
  const whole = dot === -1 ? t : t.slice(0, dot);
  const frac = dot === -1 ? '' : t.slice(dot + 1);
  if (!isDigits(whole)) return null;
  if (dot !== -1 && !isDigits(frac)) return null;
  if (frac.length > 2) return null;
  const minor = stripZeros(whole + (frac + '00').slice(0, 2));
  if (cmp(minor, MAX_MINOR_TEXT) > 0) return null;
  if (minor === '0') return '0';
  if (negative && !opts.allowNegative) return null;
  return negative ? `-${minor}` : minor;
}

// ---------------------------------------------------------------------------------------------
// Generators shared by the fuzz tests

const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
const ws = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0'), maxLength: 2 });

/** Decimal-looking text: mostly near-valid amounts, with every kind of near miss. */
export const amountText = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        ws,
        fc.constantFrom('', '', '', '-', '+'),
        digits(0, 18),
        fc.option(fc.tuple(fc.constantFrom('.', '.', ','), digits(0, 4)), { nil: undefined }),
        ws,
      )
      .map(([a, s, w, f, b]) => `${a}${s}${w}${f ? f[0] + f[1] : ''}${b}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(digits(1, 6), fc.constantFrom('e', 'E', 'e+', 'e-'), digits(1, 3))
      .map(([m, e, x]) => `${m}${e}${x}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('NaN', 'Infinity', '-Infinity', '0x10', '1_000', '١٠', '10.5.0', '--1', '') },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

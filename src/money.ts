/**
 * Money is integer minor units (bigint) from parse to export. Nothing here ever goes through a float.
 */

export type Minor = bigint;

export type AmountParse =
  | { readonly ok: true; readonly minor: Minor; readonly raw: string }
  | { readonly ok: false; readonly reason: string; readonly raw: string };

// Plain decimal notation only: no exponent, no NaN/Infinity, no thousands separators, at most two decimals.
const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

/** Largest amount accepted, in minor units: far above any real payment, far below 2^63. */
export const MAX_MINOR = 10n ** 15n;

/**
 * Parses a decimal amount exactly to minor units (2 decimals). `raw` is the text as received, which
 * the caller keeps for audit. A JS number is accepted only through its shortest round-trip text,
 * which is exact for every value with at most two decimals below 2^53 / 100.
 */
export function parseAmount(input: unknown, opts: { allowNegative?: boolean } = {}): AmountParse {
  const raw = typeof input === 'number' ? String(input) : typeof input === 'string' ? input : describe(input);
  if (typeof input !== 'number' && typeof input !== 'string') {
    return { ok: false, reason: 'expected a decimal number', raw };
  }
  if (typeof input === 'number' && !Number.isFinite(input)) return { ok: false, reason: 'not a finite number', raw };
  const text = raw.trim();
  const m = DECIMAL.exec(text);
  if (!m) return { ok: false, reason: `not a plain decimal amount: ${JSON.stringify(raw.slice(0, 40))}`, raw };
  const [, sign, whole, frac = ''] = m;
  // Reasons are logged and stored: show a bounded prefix of a huge number, never all of it.
  const shown = text.length > 40 ? `${text.slice(0, 40)}… (${text.length} characters)` : raw;
  if (frac.length > 2) return { ok: false, reason: `more than two decimals: ${shown}`, raw };
  const minor = BigInt(whole!) * 100n + BigInt(frac.padEnd(2, '0'));
  if (minor > MAX_MINOR) return { ok: false, reason: `amount too large: ${shown}`, raw };
  const signed = sign ? -minor : minor;
  if (signed < 0n && !opts.allowNegative) return { ok: false, reason: `negative amount: ${shown}`, raw };
  return { ok: true, minor: signed, raw };
}

/** Text of a non-amount for the refusal's `raw`; never throws (a bigint or a cycle inside is not JSON). */
function describe(input: unknown): string {
  try {
    return (JSON.stringify(input) ?? String(input)).slice(0, 200);
  } catch {
    return Object.prototype.toString.call(input);
  }
}

/**
 * ISO 4217 minor units (exponents), from the standard's list one (Table A.1, current currency and funds codes, as
 * published by SIX, the maintenance agency: list-one.xml of 2026-01-01), written here rather than read from Intl:
 * ICU's currency data is CLDR's display digits, not ISO's (ICU 78 says 0 for HUF, COP, IDR, PKR, LBP, ALL, 0 for
 * IQD's 3) and changes with the Node version, so a replay on another Node would judge and show other amounts.
 * Every code not listed here has 2; so do the codes with no minor unit ("N.A.": XAU, XDR, XTS, XXX...) and codes
 * withdrawn before that list (BGN, HRK, ANG, CUC, SLL, ZWL, all of 2 decimals), as the PSP's amounts have.
 */
const ISO_4217_EXPONENTS: Readonly<Record<number, string>> = {
  0: 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF',
  2:
    'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW ' +
    'CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF ' +
    'IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK ' +
    'MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP ' +
    'SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XAD XCD XCG ' +
    'YER ZAR ZMW ZWG',
  3: 'BHD IQD JOD KWD LYD OMR TND',
  4: 'CLF UYW',
};

const EXPONENT_OF: ReadonlyMap<string, number> = new Map(
  Object.entries(ISO_4217_EXPONENTS).flatMap(([e, codes]) => codes.split(' ').map((c) => [c, Number(e)] as const)),
);

/**
 * Decimals of a currency by ISO 4217 (2 for EUR, UAH and HUF, 0 for JPY, 3 for KWD and IQD, 4 for CLF); 2 for a
 * code outside the list, as the PSP writes every amount. Amounts stay hundredths whatever the currency: this says
 * which of them a currency can carry (a whole yen is 100 of them) and how many decimals it is shown and paid with.
 */
export function currencyDecimals(currency: string): number {
  return EXPONENT_OF.get(currency) ?? 2;
}

/** The currency's smallest unit in hundredths: 100 for JPY (a whole yen), 1 for EUR, UAH and KWD. */
export function smallestUnit(currency: string): bigint {
  const e = currencyDecimals(currency);
  return e < 2 ? 10n ** BigInt(2 - e) : 1n;
}

/**
 * Why an amount (hundredths) cannot be in its currency, for the message of a door that refuses it ("is not a whole
 * number of JPY's smallest unit (JPY has 0 decimals)"); null when it is a whole number of that unit.
 */
export function notWholeUnits(amount: bigint, currency: string): string | null {
  if (amount % smallestUnit(currency) === 0n) return null;
  return `is not a whole number of ${currency}'s smallest unit (${currency} has ${currencyDecimals(currency)} decimals)`;
}

/** Minor units to a plain decimal string with two decimals ("-12.05"). Exact. */
export function formatMinor(minor: Minor): string {
  const neg = minor < 0n;
  const abs = neg ? -minor : minor;
  const whole = abs / 100n;
  const frac = (abs % 100n).toString().padStart(2, '0');
  return `${neg ? '-' : ''}${whole}.${frac}`;
}

/**
 * One rule for every value at every door (docs/bad-input.md): the bank readers, the orders readers and API, the
 * fee contract, the sub-merchant directory and the PSP readers all check dates, times and text here, so that
 * a value one door refuses is refused by all of them with the same words.
 *
 * Each check returns the value it accepts, normalized, or a reason in plain words; the caller names the field
 * (file and line, or JSON path) and decides whether the whole input is refused.
 */
import { DateTime } from 'luxon';

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * The days a business date may fall on: a date outside is a wrong unit, a placeholder (0000-01-01, 9999-12-31)
 * or a typo, never a real booking. PostgreSQL, luxon and JavaScript's Date all agree on every day inside.
 */
export interface PlausibleDates {
  /** the first day accepted, YYYY-MM-DD */
  readonly earliest: string;
  /** how many whole years after today's date (UTC) are accepted */
  readonly yearsAhead: number;
}

export const DEFAULT_PLAUSIBLE_DATES: PlausibleDates = { earliest: '2000-01-01', yearsAhead: 10 };

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** YYYY-MM-DDTHH:MM[:SS[.fff…]] then Z or ±HH:MM (or ±HHMM); nothing after it. */
const INSTANT = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/;

/** The last day accepted, as YYYY-MM-DD, given today. */
export function latestPlausibleDay(range: PlausibleDates, now: Date = new Date()): string {
  // Every value of a file asks with the same today: luxon once per (UTC day, years ahead), not per value.
  const key = `${Math.floor(now.getTime() / 86_400_000)}/${range.yearsAhead}`;
  if (latest.key === key) return latest.day;
  const today = DateTime.fromJSDate(now, { zone: 'UTC' });
  const day = today.plus({ years: range.yearsAhead }).toISODate() ?? '9999-12-31';
  latest = { key, day };
  return day;
}
let latest = { key: '', day: '' };

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Whether year-month-day is a day of the (proleptic Gregorian) calendar, as luxon's validity says. */
function isCalendarDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : MONTH_DAYS[month - 1]!);
}

/** A calendar day in strict ISO form (YYYY-MM-DD) within the plausible range. */
export function plausibleDay(
  text: string,
  range: PlausibleDates = DEFAULT_PLAUSIBLE_DATES,
  now: Date = new Date(),
): Checked<string> {
  const m = DAY.exec(text);
  if (!m) return { ok: false, reason: `not a date in the form YYYY-MM-DD: ${quoteForMessage(text)}` };
  if (!isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3])))
    return { ok: false, reason: `not a day of the calendar: ${quoteForMessage(text)}` };
  return inRange(text, range, now);
}

function inRange(day: string, range: PlausibleDates, now: Date): Checked<string> {
  if (day < range.earliest) return { ok: false, reason: `date ${day} is before ${range.earliest}` };
  const latest = latestPlausibleDay(range, now);
  if (day > latest) return { ok: false, reason: `date ${day} is after ${latest}` };
  return { ok: true, value: day };
}

/**
 * A moment in strict ISO 8601 with its zone (Z or an offset within −12:00…+14:59), within the plausible range;
 * returned as UTC ISO with milliseconds. `zoneless: 'utc'` also takes a time without a zone, read as UTC
 * (where an interface says so, e.g. the PSP's webhook times).
 */
export function plausibleInstant(
  text: string,
  options: { range?: PlausibleDates; now?: Date; zoneless?: 'refuse' | 'utc' } = {},
): Checked<string> {
  const range = options.range ?? DEFAULT_PLAUSIBLE_DATES;
  const zoneless = options.zoneless ?? 'refuse';
  const candidate = zoneless === 'utc' && /T[\d:.]+$/.test(text) ? `${text}Z` : text;
  const m = INSTANT.exec(candidate);
  if (!m) {
    return {
      ok: false,
      reason: `not a date-time in ISO 8601 form with a zone (YYYY-MM-DDTHH:MM:SSZ): ${quoteForMessage(text)}`,
    };
  }
  const [, day = '', hh, mi, ss, , zone = 'Z'] = m;
  if (Number(hh) > 23 || Number(mi) > 59 || Number(ss ?? '0') > 59)
    return { ok: false, reason: `not a time of day: ${quoteForMessage(text)}` };
  if (zone !== 'Z') {
    const digits = zone.replace(':', '');
    const hours = Number(digits.slice(1, 3));
    const minutes = Number(digits.slice(3, 5));
    const sign = digits[0];
    if (minutes > 59 || (sign === '+' ? hours > 14 : hours > 12))
      return { ok: false, reason: `not a real time zone offset: ${zone}` };
  }
  const dayChecked = plausibleDay(day, range, options.now);
  if (!dayChecked.ok) return dayChecked;
  const fast = fixedShapeUtc(day, m, zone);
  if (fast !== undefined) {
    const fastChecked = inRange(fast.slice(0, 10), range, options.now ?? new Date());
    return fastChecked.ok ? { ok: true, value: fast } : fastChecked;
  }
  const parsed = DateTime.fromISO(candidate, { setZone: true });
  if (!parsed.isValid) return { ok: false, reason: `not a date-time: ${quoteForMessage(text)}` };
  const utc = parsed.toUTC();
  const utcDay = utc.toISODate();
  if (utcDay === null) return { ok: false, reason: `not a date-time: ${quoteForMessage(text)}` };
  const utcChecked = inRange(utcDay, range, options.now ?? new Date());
  if (!utcChecked.ok) return utcChecked;
  return { ok: true, value: utc.toISO({ suppressMilliseconds: false }) ?? candidate };
}

/**
 * The instant INSTANT matched, its day, time and offset already checked, as UTC ISO with milliseconds, by
 * arithmetic (issue 26: luxon's ISO parser was most of an order's import). The same value luxon gives:
 * milliseconds cut from the fraction as luxon cuts them. Years before 1000 (Date.UTC reads 0–99 as 19xx, and
 * toISOString's form changes) go to luxon: undefined.
 */
function fixedShapeUtc(day: string, m: RegExpExecArray, zone: string): string | undefined {
  const year = Number(day.slice(0, 4));
  if (year < 1000) return undefined;
  const fraction = m[5];
  const ms = fraction ? Math.floor(Number.parseFloat(`0.${fraction}`) * 1000) : 0;
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const digits = zone.replace(':', '');
    const size = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5));
    offsetMinutes = digits[0] === '-' ? -size : size;
  }
  const local = Date.UTC(
    year,
    Number(day.slice(5, 7)) - 1,
    Number(day.slice(8, 10)),
    Number(m[2]),
    Number(m[3]),
    Number(m[4] ?? '0'),
    ms,
  );
  const iso = new Date(local - offsetMinutes * 60_000).toISOString();
  return iso.length === 24 ? iso : undefined;
}

/** What a text field may hold. Every field a door reads names its policy (docs/bad-input.md). */
export interface TextPolicy {
  /** longest accepted, in characters (UTF-16 code units, as JavaScript and the JSON in the store count) */
  readonly maxLength: number;
  /** line breaks (CR, LF) kept, e.g. a bank's remittance text; otherwise refused */
  readonly lineBreaks?: boolean;
  /** tabs kept */
  readonly tabs?: boolean;
  /** empty accepted */
  readonly empty?: boolean;
  /** bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) refused; otherwise kept and escaped on output */
  readonly refuseBidi?: boolean;
  /** card numbers in it masked (maskCardNumbersInText): a text a person types, which recon keeps and shows */
  readonly maskCardNumbers?: boolean;
}

/** A short name: one line, no bidirectional overrides, 200 characters. */
export const NAME_TEXT: TextPolicy = { maxLength: 200, refuseBidi: true };
/** A reference or an id written by another system: one line, 256 characters. */
export const REFERENCE_TEXT: TextPolicy = { maxLength: 256, refuseBidi: true };
/** Free text (a remittance, a description): line breaks kept, 4,096 characters. */
export const FREE_TEXT: TextPolicy = { maxLength: 4096, lineBreaks: true, tabs: true, empty: true };
/**
 * What a person writes to say why (an exception's comment or note, a payout run's reason, a payee's check, a
 * revocation): free text of 4,000 characters, not empty, stored for good and shown in the console and reports, so
 * with its card numbers masked (an analyst pasting the payer's card into a comment).
 */
export const NOTE_TEXT: TextPolicy = { ...FREE_TEXT, maxLength: 4000, empty: false, maskCardNumbers: true };

const BIDI = /[\u202A-\u202E\u2066-\u2069]/;

/**
 * A text a door may store. NUL, lone surrogates and control characters (C0 other than the allowed breaks,
 * DEL, C1) are refused whatever the policy: PostgreSQL cannot store NUL in text, a lone surrogate is not
 * Unicode, and control characters print as something else on every output.
 */
export function checkText(text: string, policy: TextPolicy): Checked<string> {
  if (text.length === 0 && !policy.empty) return { ok: false, reason: 'empty' };
  if (text.length > policy.maxLength)
    return { ok: false, reason: `longer than ${policy.maxLength} characters (${text.length})` };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return { ok: false, reason: `a lone surrogate (U+${hex(c)}) at character ${i + 1}: not Unicode text` };
    }
    if (c >= 0xdc00 && c <= 0xdfff)
      return { ok: false, reason: `a lone surrogate (U+${hex(c)}) at character ${i + 1}: not Unicode text` };
    if (c === 0) return { ok: false, reason: `a NUL character at character ${i + 1}` };
    if ((c === 10 || c === 13) && policy.lineBreaks) continue;
    if (c === 9 && policy.tabs) continue;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
      return { ok: false, reason: `a control character (U+${hex(c)}) at character ${i + 1}` };
  }
  if (policy.refuseBidi) {
    const m = BIDI.exec(text);
    if (m) {
      return {
        ok: false,
        reason: `a bidirectional override (U+${hex(m[0].charCodeAt(0))}) at character ${m.index + 1}`,
      };
    }
  }
  return { ok: true, value: policy.maskCardNumbers ? (maskCardNumbersInText(text) ?? text) : text };
}

function hex(c: number): string {
  return c.toString(16).toUpperCase().padStart(4, '0');
}

/** Lone surrogates, NUL and control characters, for the terminal and logs: each shown as its escape. */
const UNPRINTABLE =
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A text as a terminal should show it: control characters (ANSI escapes among them), bidirectional overrides
 * and lone surrogates written as `\u{…}` so they neither move the cursor nor reorder the line. Tabs and line
 * breaks are kept unless `oneLine`.
 */
export function printable(text: string, options: { oneLine?: boolean } = {}): string {
  const escaped = text.replace(UNPRINTABLE, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
  return options.oneLine ? escaped.replace(/\r\n|\r|\n/g, '\\n').replace(/\t/g, '\\t') : escaped;
}

/**
 * A value quoted into a refusal's message: printable, one line, at most 60 characters, card numbers masked. Masked
 * before it is cut: a cut inside a card number leaves a run too short to look like one, which no later masking
 * (the command line's, the log's) would see.
 */
export function quoteForMessage(text: string): string {
  const shown = printable(maskPans(text), { oneLine: true });
  // printable() has escaped what needs it; JSON.stringify would escape its backslashes a second time
  return `"${(shown.length > 60 ? `${shown.slice(0, 60)}…` : shown).replace(/"/g, '\\"')}"`;
}

/** Three uppercase letters (ISO 4217's shape). */
export function checkCurrency(text: string): Checked<string> {
  return /^[A-Z]{3}$/.test(text)
    ? { ok: true, value: text }
    : { ok: false, reason: `not a currency code (three capital letters): ${quoteForMessage(text)}` };
}

/** Control characters, bidirectional overrides and isolates and lone surrogates: what a document must not carry. */
const NOT_FOR_DOCUMENTS =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A stored text as a document (a PDF, an e-mail's subject or greeting) prints it: on one line (line breaks and
 * tabs become a space), without control characters, bidirectional overrides or lone surrogates, and cut to
 * `maxLength` characters with "…". Defence in depth for texts stored before their door checked them.
 */
export function documentText(text: string, maxLength: number = NAME_TEXT.maxLength): string {
  const one = text
    .replace(/[\t\n\r]+/g, ' ')
    .replace(NOT_FOR_DOCUMENTS, '')
    .replace(/ {2,}/g, ' ')
    .trim();
  if (one.length <= maxLength) return one;
  // never cut between the two halves of a surrogate pair
  let cut = one.slice(0, maxLength - 1);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}

/** Whether `digits` (digits only) pass the card-number check digit (Luhn). */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

// What stands between a card number's groups as people and programs print them: one to three spaces (the
// no-break, figure, thin and narrow no-break spaces among them), dashes or underscores, mixed or not.
const GROUP_SEP = '[ \\u00A0\\u2007\\u2009\\u202F_-]{1,3}';
const NOT_DIGITS = /[^0-9]/g;
// 13 to 19 digits, whole or in the groups cards are printed in (4-4-4-4-1..3, 4-4-4-1..7, or 4-6-5); never part
// of a longer word (a UUID's digits between its letters and dashes are not a card number), but an escaped letter
// (a JSON text's `\n4111…`, a log line's) is no word. A whole run next to a decimal point and digits is an
// amount's (90071992547409.91) or a fraction's, no card number.
const PAN_SHAPE = new RegExp(
  '(?<![0-9]|(?<!\\\\)[A-Za-z])(?:' +
    [
      `\\d{4}${GROUP_SEP}\\d{4}${GROUP_SEP}\\d{4}${GROUP_SEP}\\d{4}${GROUP_SEP}\\d{1,3}`,
      `\\d{4}${GROUP_SEP}\\d{4}${GROUP_SEP}\\d{4}${GROUP_SEP}\\d{1,7}`,
      `\\d{4}${GROUP_SEP}\\d{6}${GROUP_SEP}\\d{5}`,
      '(?<!\\d\\.)\\d{13,19}(?!\\.\\d)',
    ].join('|') +
    ')(?![0-9A-Za-z])',
  'g',
);

const FOUR_GROUPS = new RegExp(`^\\d{4}(?:${GROUP_SEP}\\d{4}){3}(?=${GROUP_SEP})`);

/**
 * A run of PAN_SHAPE masked when it is a card number: the whole run, or its first four groups (a 16-digit card
 * followed by a number of its own, 4111 1111 1111 1111 202); the run as it was otherwise.
 */
function maskedRun(run: string): string {
  const digits = run.replace(NOT_DIGITS, '');
  if (luhnValid(digits)) return `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}`;
  const four = digits.length > 16 && digits.length < run.length ? FOUR_GROUPS.exec(run)?.[0] : undefined;
  if (four !== undefined) {
    const masked = maskedRun(four);
    if (masked !== four) return masked + run.slice(four.length);
  }
  return run;
}

/**
 * `text` with every card number in it masked to its first six and last four digits, as a PSP masks: a run of a
 * card number's shape that passes the check digit (src/ingest/card-numbers.ts says where the doors mask).
 */
export function maskPans(text: string): string {
  PAN_SHAPE.lastIndex = 0;
  if (!PAN_SHAPE.test(text)) return text;
  PAN_SHAPE.lastIndex = 0;
  return text.replace(PAN_SHAPE, maskedRun);
}

/**
 * A text a person typed and a file carries (a bank entry's remittance and counterparty name, an order's customer
 * reference, a note) with its card numbers masked; null stays null. In a bank text a run joined by dashes to
 * letters or digits on either side is part of a reference (`RS-4111111111111111-2025-03-EUR`, a payout's
 * statement number that src/reconciliation/payouts/match.ts looks for) and is kept.
 */
export function maskCardNumbersInText(text: string | null, keepJoined = false): string | null {
  if (text === null || !holdsCardNumber(text)) return text;
  return text.replace(PAN_SHAPE, (m: string, at: number) => {
    if (keepJoined && (/[0-9A-Za-z]-$/.test(text.slice(0, at)) || /^-[0-9A-Za-z]/.test(text.slice(at + m.length))))
      return m;
    return maskedRun(m);
  });
}

/**
 * Whether some run of `text` of a card number's shape passes the check digit. A match cannot cross a quote (a
 * card number's shape is digits, spaces and dashes), and a quote is no letter or digit, so a string value of a
 * JSON text holds exactly the matches the whole text holds there: none passing means no string value changes.
 */
export function holdsCardNumber(text: string): boolean {
  PAN_SHAPE.lastIndex = 0;
  for (let m = PAN_SHAPE.exec(text); m !== null; m = PAN_SHAPE.exec(text)) {
    if (maskedRun(m[0]) !== m[0]) {
      PAN_SHAPE.lastIndex = 0;
      return true;
    }
  }
  return false;
}

import fc from 'fast-check';

/**
 * The hostile corpus of the orders door (issue 23): each case is one order record and the exact outcome, the
 * same through every way in (orderInput, a CSV file, an NDJSON file, POST /api/orders). Generated cases
 * (fast-check) come with an oracle written here, independently of src/input-rules.ts.
 */

export const NOW = new Date('2026-11-27T12:00:00Z');
/** the last plausible day given NOW: ten years ahead */
export const LATEST_DAY = '2036-11-27';
/** The corpus's case whose value is out of range only as seen from NOW (a door running on the real clock moves it). */
export const DAY_AFTER_RANGE = 'created_at a day after the range';

export type Outcome =
  | { readonly refused: string; readonly reason: RegExp }
  | { readonly accepted: Readonly<Record<string, unknown>> };

export interface OrderCase {
  readonly name: string;
  readonly record: Readonly<Record<string, string>>;
  readonly outcome: Outcome;
  /** false: the record cannot be written to a UTF-8 file as it is (a lone surrogate), so it goes by JSON only */
  readonly inFiles?: boolean;
}

const base = { order_id: 'doors-1', amount: '10.00', currency: 'EUR', created_at: '2026-01-05T10:00:00Z' };
const refuse = (field: string, reason: RegExp): Outcome => ({ refused: field, reason });
const accept = (values: Record<string, unknown>): Outcome => ({ accepted: values });

let n = 0;
const c = (name: string, fields: Record<string, string>, outcome: Outcome, inFiles = true): OrderCase => ({
  name,
  record: { ...base, order_id: `doors-${++n}`, ...fields },
  outcome,
  inFiles,
});

export const orderCases: OrderCase[] = [
  // times: the four of the issue, then their neighbours
  c(
    'created_at 9999-12-31T23:59:59Z',
    { created_at: '9999-12-31T23:59:59Z' },
    refuse('created_at', /after 2036-11-27/),
  ),
  c('created_at 0000-01-01', { created_at: '0000-01-01T00:00:00Z' }, refuse('created_at', /before 2000-01-01/)),
  c('created_at +275760-09-13', { created_at: '+275760-09-13T00:00:00Z' }, refuse('created_at', /ISO 8601 form/)),
  c('created_at -000001-01-01', { created_at: '-000001-01-01T00:00:00Z' }, refuse('created_at', /ISO 8601 form/)),
  c('created_at 1999-12-31T23:59:59Z', { created_at: '1999-12-31T23:59:59Z' }, refuse('created_at', /before 2000/)),
  c(
    'created_at on the first day, but the day before in UTC',
    { created_at: '2000-01-01T10:00:00+14:00' },
    refuse('created_at', /1999-12-31 is before 2000-01-01/),
  ),
  c('created_at 0001-01-01', { created_at: '0001-01-01T00:00:00Z' }, refuse('created_at', /before 2000/)),
  c('created_at 1900-01-01', { created_at: '1900-01-01T00:00:00Z' }, refuse('created_at', /before 2000/)),
  c(DAY_AFTER_RANGE, { created_at: '2036-11-28T00:00:00Z' }, refuse('created_at', /after/)),
  c('created_at 25 o’clock', { created_at: '2026-01-02T25:00:00Z' }, refuse('created_at', /not a time of day/)),
  c('created_at minute 60', { created_at: '2026-01-02T10:60:00Z' }, refuse('created_at', /not a time of day/)),
  c('created_at offset +15:00', { created_at: '2026-01-02T10:00:00+15:00' }, refuse('created_at', /time zone offset/)),
  c('created_at offset -13:00', { created_at: '2026-01-02T10:00:00-13:00' }, refuse('created_at', /time zone offset/)),
  c(
    'created_at 30 February',
    { created_at: '2026-02-30T10:00:00Z' },
    refuse('created_at', /not a day of the calendar/),
  ),
  c('created_at without a zone', { created_at: '2026-01-02T10:00:00' }, refuse('created_at', /has no offset/)),
  c(
    'created_at with garbage after Z',
    { created_at: '2026-01-02T10:00:00Zjunk' },
    refuse('created_at', /has no offset/),
  ),
  c('created_at with a space for T', { created_at: '2026-01-02 10:00:00Z' }, refuse('created_at', /ISO 8601 form/)),
  c('created_at a day only', { created_at: '2026-01-02' }, refuse('created_at', /has no offset/)),
  c('created_at in milliseconds', { created_at: '1735725600000' }, refuse('created_at', /has no offset/)),
  c('created_at basic form', { created_at: '20260102T100000Z' }, refuse('created_at', /ISO 8601 form/)),
  c('created_at NUL inside', { created_at: '2026-01-02T10:00\u0000:00Z' }, refuse('created_at', /ISO 8601 form/)),
  c(
    'created_at 2000-01-01 (first day)',
    { created_at: '2000-01-01T00:00:00Z' },
    accept({ createdAt: '2000-01-01T00:00:00.000Z' }),
  ),
  c(
    'created_at the last day',
    { created_at: `${LATEST_DAY}T23:59:59Z` },
    accept({ createdAt: `${LATEST_DAY}T23:59:59.000Z` }),
  ),
  c(
    'created_at with an offset, to UTC',
    { created_at: '2026-01-02T03:04:05+02:00' },
    accept({ createdAt: '2026-01-02T01:04:05.000Z' }),
  ),
  c(
    'created_at nanoseconds, to milliseconds',
    { created_at: '2026-01-02T03:04:05.123456789Z' },
    accept({ createdAt: '2026-01-02T03:04:05.123Z' }),
  ),
  c(
    'created_at without seconds',
    { created_at: '2026-01-02T03:04Z' },
    accept({ createdAt: '2026-01-02T03:04:00.000Z' }),
  ),
  c('amended_at 9999', { amended_at: '9999-12-31T23:59:59Z' }, refuse('amended_at', /after/)),
  c('amended_at 0000', { amended_at: '0000-01-01T00:00:00Z' }, refuse('amended_at', /before/)),
  // texts: customer_reference is REFERENCE_TEXT (one line, 256 characters, no bidi overrides)
  c(
    'customer_reference with NUL',
    { customer_reference: 'ref\u0000x' },
    refuse('customer_reference', /NUL character at character 4/),
  ),
  c(
    'customer_reference a lone high surrogate',
    { customer_reference: 'ref\uD800' },
    refuse('customer_reference', /lone surrogate \(U\+D800\)/),
    false,
  ),
  c(
    'customer_reference a lone low surrogate',
    { customer_reference: '\uDC00ref' },
    refuse('customer_reference', /lone surrogate \(U\+DC00\)/),
    false,
  ),
  c(
    'customer_reference with LF',
    { customer_reference: 'two\nlines' },
    refuse('customer_reference', /control character \(U\+000A\)/),
  ),
  c(
    'customer_reference with CR',
    { customer_reference: 'two\rlines' },
    refuse('customer_reference', /control character \(U\+000D\)/),
  ),
  c(
    'customer_reference with an ANSI escape',
    { customer_reference: '\u001b[31mred' },
    refuse('customer_reference', /U\+001B/),
  ),
  c('customer_reference with DEL', { customer_reference: 'a\u007fb' }, refuse('customer_reference', /U\+007F/)),
  c(
    'customer_reference with a C1 control',
    { customer_reference: 'a\u0085b' },
    refuse('customer_reference', /U\+0085/),
  ),
  c('customer_reference with a tab', { customer_reference: 'a\tb' }, refuse('customer_reference', /U\+0009/)),
  c(
    'customer_reference with RLO',
    { customer_reference: '\u202Eevil' },
    refuse('customer_reference', /bidirectional override \(U\+202E\)/),
  ),
  c('customer_reference with an isolate', { customer_reference: 'a\u2066b' }, refuse('customer_reference', /U\+2066/)),
  c(
    'customer_reference of 257 characters',
    { customer_reference: 'r'.repeat(257) },
    refuse('customer_reference', /longer than 256/),
  ),
  c(
    'customer_reference of 256 characters',
    { customer_reference: 'r'.repeat(256) },
    accept({ customerReference: 'r'.repeat(256) }),
  ),
  c(
    'customer_reference with an emoji (a surrogate pair)',
    { customer_reference: 'gift 🎁' },
    accept({ customerReference: 'gift 🎁' }),
  ),
  c(
    'customer_reference with a card number: masked',
    { customer_reference: 'card 4111-1111-1111-1111' },
    accept({ customerReference: 'card 411111******1111' }),
  ),
  c('customer_reference in Cyrillic', { customer_reference: 'Квітка-12' }, accept({ customerReference: 'Квітка-12' })),
  c(
    'customer_reference a formula (data)',
    { customer_reference: '=HYPERLINK("x")' },
    accept({ customerReference: '=HYPERLINK("x")' }),
  ),
  c(
    'customer_reference an SQL string (data)',
    { customer_reference: "'; drop table x; --" },
    accept({ customerReference: "'; drop table x; --" }),
  ),
  c('order_id with NUL', { order_id: 'o\u0000' }, refuse('order_id', /printable text/)),
  c('order_id with LF', { order_id: 'o\n1' }, refuse('order_id', /printable text/)),
  c('order_id with RLO', { order_id: 'o\u202E1' }, refuse('order_id', /printable text/)),
  c('split id with NUL', { split: 'sm\u0000a:1.00' }, refuse('split[0].sub_merchant_id', /not a sub-merchant id/)),
  c('currency with NUL', { currency: 'EU\u0000' }, refuse('currency', /three-letter/)),
  c('amount 1e3', { amount: '1e3' }, refuse('amount', /./)),
];

// ---- generated cases (fast-check) and their oracle ----

/** A date-time text of any year (−9999…+99999), a real or unreal calendar and clock, with or without a zone. */
export const instantText = fc
  .record({
    year: fc.oneof(fc.integer({ min: 1990, max: 2040 }), fc.integer({ min: -9999, max: 99999 })),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    zone: fc.constantFrom('Z', '+02:00', '-05:30', '+14:00', '-12:00', '+15:00', '', '+0100'),
  })
  .map(({ year, month, day, hour, minute, zone }) => {
    const y =
      year >= 0 && year <= 9999
        ? String(year).padStart(4, '0')
        : `${year < 0 ? '-' : '+'}${String(Math.abs(year)).padStart(6, '0')}`;
    const p = (v: number) => String(v).padStart(2, '0');
    return `${y}-${p(month)}-${p(day)}T${p(hour)}:${p(minute)}:00${zone}`;
  });

/** The oracle: the UTC instant it stands for when plausible, else null (Date arithmetic, not input-rules). */
export function expectedInstant(text: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):00(Z|[+-]\d{2}:?\d{2})$/.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi] = m.slice(1, 6).map(Number) as [number, number, number, number, number];
  const zone = m[6]!;
  if (h > 23 || mi > 59) return null;
  const day = text.slice(0, 10);
  if (day < '2000-01-01' || day > LATEST_DAY) return null;
  const local = Date.UTC(y, mo - 1, d, h, mi);
  const back = new Date(local);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  let offset = 0;
  if (zone !== 'Z') {
    const digits = zone.replace(':', '');
    const hours = Number(digits.slice(1, 3));
    const minutes = Number(digits.slice(3, 5));
    if (minutes > 59 || (digits[0] === '+' ? hours > 14 : hours > 12)) return null;
    offset = (digits[0] === '+' ? 1 : -1) * (hours * 60 + minutes);
  }
  const utc = new Date(local - offset * 60_000).toISOString();
  if (utc.slice(0, 10) < '2000-01-01' || utc.slice(0, 10) > LATEST_DAY) return null;
  return utc;
}

/** Texts with every kind of character a door sees: controls, bidi, surrogates (paired or not), emoji. */
export const referenceText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom('a', ' ', '\u0000', '\n', '\u001b', '\u202E', '\uD800', '\uDC00', '🎁', 'é', '\u0085'),
    maxLength: 12,
  }),
  fc.string({ unit: 'grapheme', minLength: 250, maxLength: 270 }),
);

/** The oracle of REFERENCE_TEXT: refused when empty of meaning to PostgreSQL, a terminal or a line. */
export function referenceRefused(text: string): boolean {
  if (text.length > 256) return true;
  // a paired surrogate is Unicode; an unpaired one is not
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)) return true;
  return /[\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/.test(text);
}

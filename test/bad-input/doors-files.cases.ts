import fc from 'fast-check';

/**
 * The hostile corpus of the fee contract and the sub-merchant directory (issue 23): each case is a file's text
 * and the exact refusal (`file:line (column c): reason`, as formatCsvIssue writes it) or the accepted value.
 */

export interface FileCase {
  readonly name: string;
  /** the text after the header (line 2 on) */
  readonly rows: string;
  /** the refusals, `<file>` standing for the file's path; empty: accepted */
  readonly refused: readonly string[];
  /** what an accepted row stored (the directory's name) */
  readonly accepted?: string;
}

export const FEE_HEAD = 'sub_merchant_id,method,currency,percent,fixed,effective_from,rounding';
const fee = (day: string) => `sm-1,purchase,EUR,1.5,0,2025-01-01,\nsm-2,purchase,EUR,2,0.10,${day},down\n`;
const feeRefused = (reason: string) => [`<file>:3 (column effective_from): expected a day YYYY-MM-DD: ${reason}`];

export const feeCases: FileCase[] = [
  {
    name: 'effective_from 0000-01-01',
    rows: fee('0000-01-01'),
    refused: feeRefused('date 0000-01-01 is before 2000-01-01'),
  },
  {
    name: 'effective_from 0001-01-01',
    rows: fee('0001-01-01'),
    refused: feeRefused('date 0001-01-01 is before 2000-01-01'),
  },
  {
    name: 'effective_from 1900-01-01',
    rows: fee('1900-01-01'),
    refused: feeRefused('date 1900-01-01 is before 2000-01-01'),
  },
  {
    name: 'effective_from 1999-12-31',
    rows: fee('1999-12-31'),
    refused: feeRefused('date 1999-12-31 is before 2000-01-01'),
  },
  { name: 'effective_from 9999-12-31', rows: fee('9999-12-31'), refused: [expect9999()] },
  {
    name: 'effective_from 30 February',
    rows: fee('2025-02-30'),
    refused: feeRefused('not a day of the calendar: "2025-02-30"'),
  },
  {
    name: 'effective_from with a time after it',
    rows: fee('2025-01-02Tgarbage'),
    refused: feeRefused('not a date in the form YYYY-MM-DD: "2025-01-02Tgarbage"'),
  },
  {
    name: 'effective_from 2025-1-2',
    rows: fee('2025-1-2'),
    refused: feeRefused('not a date in the form YYYY-MM-DD: "2025-1-2"'),
  },
  {
    name: 'effective_from with a NUL',
    rows: fee('2025-01-0\u00002'),
    refused: feeRefused('not a date in the form YYYY-MM-DD: "2025-01-0\\u{0}2"'),
  },
  { name: 'effective_from 2000-01-01 (the first day)', rows: fee('2000-01-01'), refused: [] },
];

/** 9999-12-31 is after the last plausible day, which moves with the clock: the reason names it. */
function expect9999(): string {
  const latest = new Date();
  latest.setUTCFullYear(latest.getUTCFullYear() + 10);
  return `<file>:3 (column effective_from): expected a day YYYY-MM-DD: date 9999-12-31 is after ${latest.toISOString().slice(0, 10)}`;
}

export const DIRECTORY_HEAD = 'sub_merchant_id,name,reserve_hold_days,email,legal_name,address';
const POLICY = 'a name is one line of at most 200 characters, without control characters or bidirectional overrides';
const dir = (name: string) => `sm-ok,Good Shop,30,,,\nsm-bad,${name},30,,,\n`;
const nameRefused = (reason: string) => [`<file>:3 (column name): ${reason} (${POLICY})`];

export const directoryCases: FileCase[] = [
  { name: 'a NUL in a name', rows: dir('Evil\u0000Shop'), refused: nameRefused('a NUL character at character 5') },
  {
    name: 'CR LF in a quoted name',
    rows: dir('"Evil\r\nSub-merchant: Other"'),
    refused: nameRefused('a control character (U+000D) at character 5'),
  },
  {
    name: 'LF in a quoted name',
    rows: dir('"Evil\nDear Other,"'),
    refused: nameRefused('a control character (U+000A) at character 5'),
  },
  {
    name: 'a right-to-left override',
    rows: dir('\u202Efdp.exe'),
    refused: nameRefused('a bidirectional override (U+202E) at character 1'),
  },
  {
    name: 'a left-to-right isolate',
    rows: dir('Shop\u2066x'),
    refused: nameRefused('a bidirectional override (U+2066) at character 5'),
  },
  {
    name: 'an ANSI escape',
    rows: dir('\u001b[31mRed'),
    refused: nameRefused('a control character (U+001B) at character 1'),
  },
  {
    name: 'a C1 control',
    rows: dir('Shop\u0085'),
    refused: nameRefused('a control character (U+0085) at character 5'),
  },
  { name: 'DEL', rows: dir('Sh\u007fop'), refused: nameRefused('a control character (U+007F) at character 3') },
  { name: 'a tab inside', rows: dir('Sh\top'), refused: nameRefused('a control character (U+0009) at character 3') },
  {
    name: 'a name of 201 characters',
    rows: dir('N'.repeat(201)),
    refused: nameRefused('longer than 200 characters (201)'),
  },
  {
    name: 'a name of 10,000 characters',
    rows: dir('Long name '.repeat(1000)),
    refused: nameRefused('longer than 200 characters (9999)'),
  },
  { name: 'a name of 200 characters', rows: dir('N'.repeat(200)), refused: [], accepted: 'N'.repeat(200) },
  { name: 'a name in Cyrillic', rows: dir('Квітка ТОВ'), refused: [], accepted: 'Квітка ТОВ' },
  { name: 'a name with an emoji', rows: dir('Gifts 🎁'), refused: [], accepted: 'Gifts 🎁' },
  {
    name: 'a quoted name with a comma and quotes',
    rows: dir('"O\'Brien ""&"" Sons, Ltd"'),
    refused: [],
    accepted: 'O\'Brien "&" Sons, Ltd',
  },
  { name: 'a formula (data, neutralised on export)', rows: dir('=1+2'), refused: [], accepted: '=1+2' },
  {
    name: 'a NUL in the id',
    rows: 'sm-ok,Good Shop,30,,,\nsm\u0000bad,Bad,30,,,\n',
    refused: [
      '<file>:3 (column sub_merchant_id): "sm\\u0000bad" is not an identifier (letters, digits, _ . : -; at most 100)',
    ],
  },
  {
    name: 'a line break in the legal name',
    rows: 'sm-ok,Good Shop,30,,,\nsm-bad,Bad,30,,"Bad\nLtd",\n',
    refused: [
      '<file>:3 (column legal_name): a control character (U+000A) at character 4 (at most 200 characters on one line, no control characters or bidirectional overrides)',
    ],
  },
  {
    name: 'an override in the address',
    rows: 'sm-ok,Good Shop,30,,,\nsm-bad,Bad,30,,,Main St \u202E1\n',
    refused: [
      '<file>:3 (column address): a bidirectional override (U+202E) at character 9 (at most 300 characters on one line, no control characters or bidirectional overrides)',
    ],
  },
  {
    name: 'an override in the e-mail address',
    rows: 'sm-ok,Good Shop,30,,,\nsm-bad,Bad,30,a\u202E@b.example,,\n',
    refused: ['<file>:3 (column email): "a\\u{202e}@b.example" is not an e-mail address'],
  },
];

/** Texts with every kind of character a name may hold, around the length limit too. */
export const nameText = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({
    unit: fc.constantFrom(
      'a',
      'Я',
      ' ',
      '\u0000',
      '\r',
      '\n',
      '\t',
      '\u001b',
      '\u202E',
      '\u2067',
      '\uD83C\uDF81',
      '\u0085',
      ',',
    ),
    maxLength: 12,
  }),
  fc.string({ unit: fc.constantFrom('a', 'b', ' '), minLength: 195, maxLength: 205 }),
);

/** The oracle of the name policy (the directory trims the cell first, as every column). */
export function nameIsRefused(text: string): boolean {
  const t = text.trim();
  if (t === '' || t.length > 200) return true;
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(t)) return true;
  return /[\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/.test(t);
}

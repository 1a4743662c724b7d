import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useTestStore } from '../support/db';
import { tempFile } from '../ingest/bank/support';
import {
  accepted,
  type BankCase,
  camt,
  csv,
  csvMapping,
  type Door,
  lineOf,
  mt940,
  type Outcome,
  refused,
} from './bank-files.cases';
import { bankDoors } from './bank-harness';

/**
 * Generated bank files (fast-check, fixed seeds): dates of any year, month and day, texts of any mix of
 * NUL, control characters, bidirectional overrides, tabs, line breaks and ordinary letters, and bytes of
 * any value, in every bank door. The outcome of each is worked out here, from the documented rules alone
 * (docs/bank.md, docs/bad-input.md), and the import must give exactly that: refused naming file, line and
 * problem with the store unchanged, or accepted with the value stored as the file gave it.
 */

const t = useTestStore();
const { expectOutcome } = bankDoors(t);

let serial = 0;
const nextId = (prefix: string) => `${prefix}${(serial++).toString(36).padStart(3, '0')}`;
const EXT: Record<Door, string> = { 'camt.053': 'xml', mt940: 'sta', csv: 'csv' };

/** refused and accepted cases per kind: the generators must give both */
const outcomes: Record<string, { refused: number; accepted: number }> = {};

async function runCase(c: BankCase): Promise<void> {
  const o = (outcomes[c.check] ??= { refused: 0, accepted: 0 });
  if ('refused' in c.expect) o.refused++;
  else o.accepted++;
  const file = tempFile(`gen-${serial}-${c.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40)}.${EXT[c.door]}`, c.bytes);
  await expectOutcome([file], file, c.expect, c);
}

// ---------------------------------------------------------------- the oracle: the documented rules

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** today + 10 years, as the plausible range ends (docs/bad-input.md) */
function latestDay(): string {
  const now = new Date();
  return `${now.getUTCFullYear() + 10}-${pad(now.getUTCMonth() + 1)}-${pad(now.getUTCDate())}`;
}

const isCalendarDay = (y: number, m: number, d: number) => {
  if (m < 1 || m > 12 || d < 1) return false;
  const probe = new Date(Date.UTC(2000, m - 1, d));
  probe.setUTCFullYear(y);
  return probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d;
};

/** The refusal of a day in YYYY-MM-DD form, or null when it is accepted. */
function dayRule(y: number, m: number, d: number): RegExp | null {
  const iso = `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
  if (!isCalendarDay(y, m, d)) return new RegExp(`not a day of the calendar: "${iso}"`);
  if (iso < '2000-01-01') return new RegExp(`date ${iso} is before 2000-01-01`);
  if (iso > latestDay()) return new RegExp(`date ${iso} is after ${latestDay()}`);
  return null;
}

interface Policy {
  readonly breaks: boolean;
  readonly tabs: boolean;
  readonly refuseBidi: boolean;
}
const NAME: Policy = { breaks: false, tabs: false, refuseBidi: true };
const FREE: Policy = { breaks: true, tabs: true, refuseBidi: false };
const LINE: Policy = { breaks: false, tabs: true, refuseBidi: false };
const CELL: Policy = { breaks: true, tabs: true, refuseBidi: false };

const hex = (c: number) => c.toString(16).toUpperCase().padStart(4, '0');

/** The refusal of a text under a policy (the first character that breaks it), or null. */
function textRule(s: string, p: Policy): RegExp | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return new RegExp(`a NUL character at character ${i + 1}$`);
    if ((c === 10 || c === 13) && p.breaks) continue;
    if (c === 9 && p.tabs) continue;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
      return new RegExp(`a control character \\(U\\+${hex(c)}\\) at character ${i + 1}$`);
  }
  if (p.refuseBidi) {
    const i = s.search(/[\u202A-\u202E\u2066-\u2069]/);
    if (i >= 0) return new RegExp(`a bidirectional override \\(U\\+${hex(s.charCodeAt(i))}\\) at character ${i + 1}$`);
  }
  return null;
}

/** XML 1.0 characters: a file with any other is not XML. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const linesIn = (s: string) => s.split('\n').length - 1;

// ---------------------------------------------------------------- dates

const day = fc.record({
  y: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1995, max: 2045 })),
  m: fc.integer({ min: 0, max: 13 }),
  d: fc.integer({ min: 0, max: 32 }),
});

function dateCase(door: Door, y: number, m: number, d: number): BankCase {
  const id = nextId(`GD${door[0]}`);
  if (door === 'camt.053') {
    const iso = `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
    const text = camt(id).replace('<BookgDt><Dt>2025-06-01</Dt>', `<BookgDt><Dt>${iso}</Dt>`);
    const bad = dayRule(y, m, d);
    return {
      name: `camt BookgDt ${iso}`,
      door,
      check: 'dates',
      bytes: text,
      expect: bad
        ? refused(
            new RegExp(`^line ${lineOf(text, `<Dt>${iso}`)}, column \\d+ \\(Stmt\\[0\\]/Ntry/BookgDt/Dt entry 1\\)$`),
            bad,
          )
        : accepted(2, ['bookingDate', iso]),
    };
  }
  if (door === 'mt940') {
    const yy = y % 100;
    const year = yy >= 80 ? 1900 + yy : 2000 + yy;
    const yymmdd = `${pad(yy)}${pad(m)}${pad(d)}`;
    const text = mt940(id).replace(':61:250601', `:61:${yymmdd}`);
    const bad = dayRule(year, m, d);
    // the booking day (MMDD 0601) takes the value date's year: within the range whenever the value date is
    return {
      name: `MT940 :61: value date ${yymmdd}`,
      door,
      check: 'dates',
      bytes: text,
      expect: bad
        ? refused(`line ${lineOf(text, `:61:${yymmdd}`)}`, new RegExp(`^:61: ${bad.source}`))
        : accepted(2, ['valueDate', `${year}-${pad(m)}-${pad(d)}`]),
    };
  }
  const text = `${pad(d)}.${pad(m)}.${pad(y, 4)}`;
  const bad = isCalendarDay(y, m, d) ? dayRule(y, m, d) : new RegExp(`not a date in the format dd.MM.yyyy: "${text}"`);
  return {
    name: `CSV booking day ${text}`,
    door,
    check: 'dates',
    bytes: csv(id, { Buchungstag: text }),
    mapping: csvMapping(id),
    expect: bad
      ? refused('line 2, column "Buchungstag"', bad)
      : accepted(2, ['bookingDate', `${pad(y, 4)}-${pad(m)}-${pad(d)}`]),
  };
}

// ---------------------------------------------------------------- texts

const ALPHABET = [
  'a',
  'b',
  ' ',
  'é',
  'Ж',
  '😀',
  '\u00a0',
  '\u0000',
  '\u0001',
  '\u0007',
  '\t',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u009b',
  '\u202e',
  '\u2066',
  '\ufffe',
  '\n',
];
const textOf = (withBreaks: boolean) =>
  fc
    .array(fc.constantFrom(...ALPHABET.filter((c) => withBreaks || c !== '\n')), { minLength: 1, maxLength: 12 })
    .map((cs) => `a${cs.join('')}z`);

type TextField =
  | 'camt name'
  | 'camt remittance'
  | 'mt940 name'
  | 'mt940 remittance'
  | 'csv name'
  | 'csv remittance'
  | 'csv note';

function textCase(field: TextField, raw: string): BankCase {
  const id = nextId('GT');
  const door: Door = field.startsWith('camt') ? 'camt.053' : field.startsWith('mt940') ? 'mt940' : 'csv';
  const isName = field.endsWith('name');
  const name = `${field} ${JSON.stringify(raw)}`;
  if (door === 'camt.053') {
    const text = camt(id, isName ? { name: xmlEscape(raw) } : { remittance: xmlEscape(raw) });
    const element = isName ? 'RltdPties/Dbtr/Pty/Nm' : 'RmtInf/Ustrd';
    const open = isName ? '<Nm>' : '<Ustrd>';
    const base = lineOf(text, `${open}a`);
    const xml = NOT_XML.exec(raw);
    let expect: Outcome;
    if (xml)
      expect = refused(
        new RegExp(`^line ${base + linesIn(raw.slice(0, xml.index))}, column \\d+$`),
        /^not well-formed XML: disallowed character\.$/,
      );
    else {
      const bad = textRule(raw, isName ? NAME : FREE);
      expect = bad
        ? refused(
            new RegExp(
              `^line ${base + linesIn(raw)}, column \\d+ \\(Stmt\\[0\\]/Ntry/NtryDtls/TxDtls/${element} entry 1\\)$`,
            ),
            bad,
          )
        : accepted(2, [isName ? 'counterpartyName' : 'remittance', raw]);
    }
    return { name, door, check: 'text', bytes: text, expect };
  }
  if (door === 'mt940') {
    const text = mt940(id, isName ? { name: raw } : { remittance: raw });
    const at = lineOf(text, ':86:');
    const line = text.split('\r\n')[at - 1]!;
    const lineBad = textRule(line, LINE);
    const fieldBad = textRule(raw, isName ? NAME : FREE);
    const expect = lineBad
      ? refused(`line ${at}`, lineBad)
      : fieldBad
        ? refused(`line ${at}`, new RegExp(`^:86: ${isName ? 'counterparty name' : 'remittance'}: ${fieldBad.source}`))
        : accepted(2, [isName ? 'counterpartyName' : 'remittance', raw]);
    return { name, door, check: 'text', bytes: text, expect };
  }
  const column = field === 'csv name' ? 'Name' : field === 'csv remittance' ? 'Verwendungszweck' : 'Notiz';
  const cellBad = textRule(raw, CELL);
  const fieldBad = column === 'Name' ? textRule(raw, NAME) : column === 'Verwendungszweck' ? textRule(raw, FREE) : null;
  const bad = cellBad ?? fieldBad;
  return {
    name,
    door,
    check: 'text',
    bytes: csv(id, { [column]: raw }),
    mapping: csvMapping(id),
    expect: bad
      ? refused(`line 2, column "${column}"`, bad)
      : accepted(2, column === 'Notiz' ? undefined : [column === 'Name' ? 'counterpartyName' : 'remittance', raw]),
  };
}

// ---------------------------------------------------------------- bytes

/** bytes of any value, or the UTF-8 of any character (C1 controls, bidi overrides, U+FFFE among them) */
const bytesOf = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0x80, max: 0xff }).map((b) => [b]),
      fc.constantFrom(0xe2, 0x80, 0xae, 0xef, 0xbf, 0xbe, 0x61).map((b) => [b]),
      fc
        .oneof(
          fc.integer({ min: 0x80, max: 0x7ff }),
          fc.integer({ min: 0x800, max: 0xd7ff }),
          fc.integer({ min: 0xe000, max: 0x10ffff }),
        )
        .map((cp) => [...Buffer.from(String.fromCodePoint(cp))]),
      fc.constantFrom(0x85, 0x9b, 0x202e, 0x2066, 0xfffe).map((cp) => [...Buffer.from(String.fromCodePoint(cp))]),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.flat())
  .map((b) => Buffer.from(b))
  // a U+FFFD the file really holds is text; the corpus keeps it out so that a stored U+FFFD always means a fault
  .filter((b) => !b.includes(Buffer.from([0xef, 0xbf, 0xbd])));

/** The text of the longest start of `bytes` that is UTF-8. */
function longestText(bytes: Buffer): string {
  for (let k = bytes.length; k > 0; k--) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, k));
    } catch {
      // shorter
    }
  }
  return '';
}

function bytesCase(door: Door, bytes: Buffer): BankCase {
  const id = nextId('GB');
  const marker = 'QQMARKQQ';
  const text =
    door === 'camt.053'
      ? camt(id, { name: `a${marker}z` })
      : door === 'mt940'
        ? mt940(id, { remittance: `a${marker}z` })
        : csv(id, { Verwendungszweck: `a${marker}z` });
  const [before, after] = text.split(marker) as [string, string];
  const file = Buffer.concat([Buffer.from(before), bytes, Buffer.from(after)]);
  const line = lineOf(text, marker);
  const name = `${door} bytes ${bytes.toString('hex')}`;
  let decoded: string | null = null;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // not UTF-8 whole; the first bad byte is among them, on the marker's line
  }
  const base: Omit<BankCase, 'expect'> = {
    name,
    door,
    check: 'encoding',
    bytes: file,
    ...(door === 'csv' ? { mapping: csvMapping(id) } : {}),
  };
  if (decoded === null && door === 'camt.053') {
    // the XML reader is given the text before the first bad byte: a character XML refuses there is met first
    const prefix = longestText(bytes);
    if (NOT_XML.test(prefix))
      return {
        ...base,
        expect: refused(new RegExp(`^line ${line}, column \\d+$`), /^not well-formed XML: disallowed character\.$/),
      };
  }
  if (decoded === null)
    return {
      ...base,
      expect: refused(`line ${line}`, /^bytes that are not UTF-8 \(0x[0-9A-F]{2}.*\): declare the file's encoding/),
    };
  // valid UTF-8: the same rules as any text of that field
  const c = textCase(
    door === 'camt.053' ? 'camt name' : door === 'mt940' ? 'mt940 remittance' : 'csv remittance',
    `a${decoded}z`,
  );
  return { ...base, expect: c.expect };
}

// ---------------------------------------------------------------- the properties

const RUNS = { dates: 40, texts: 25, bytes: 30 };
const seen: Record<string, number> = {};
const count = (kind: string) => {
  seen[kind] = (seen[kind] ?? 0) + 1;
};

describe('bank statement doors: generated files', () => {
  for (const door of ['camt.053', 'mt940', 'csv'] as const) {
    it(`${door}: dates of any year, month and day`, { timeout: 300_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(day, async ({ y, m, d }) => {
          count('dates');
          await runCase(dateCase(door, y, m, d));
        }),
        { numRuns: RUNS.dates, seed: 2300 + door.length, endOnFailure: true },
      );
    });
  }
  const fields: TextField[] = [
    'camt name',
    'camt remittance',
    'mt940 name',
    'mt940 remittance',
    'csv name',
    'csv remittance',
    'csv note',
  ];
  for (const field of fields) {
    it(`${field}: texts of NUL, controls, bidi overrides, tabs, breaks and letters`, { timeout: 300_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(textOf(field.startsWith('camt')), async (raw) => {
          count('texts');
          await runCase(textCase(field, raw));
        }),
        { numRuns: RUNS.texts, seed: 2323 + field.length, endOnFailure: true },
      );
    });
  }
  for (const door of ['camt.053', 'mt940', 'csv'] as const) {
    it(`${door}: bytes of any value in a text`, { timeout: 300_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(bytesOf, async (bytes) => {
          count('bytes');
          await runCase(bytesCase(door, bytes));
        }),
        { numRuns: RUNS.bytes, seed: 2342 + door.length, endOnFailure: true },
      );
    });
  }
  it('ran at least the cases counted in docs/bad-input.md', () => {
    expect(seen.dates).toBe(3 * RUNS.dates);
    expect(seen.texts).toBe(fields.length * RUNS.texts);
    expect(seen.bytes).toBe(3 * RUNS.bytes);
    for (const kind of ['dates', 'text', 'encoding']) {
      expect(outcomes[kind]!.refused, kind).toBeGreaterThan(10);
      expect(outcomes[kind]!.accepted, kind).toBeGreaterThan(10);
    }
    console.log('generated bank cases', JSON.stringify(outcomes));
  });
});

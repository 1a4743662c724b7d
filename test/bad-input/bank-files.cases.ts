import type { BankAccount } from '../../src/config/bank';
import type { CsvMapping } from '../../src/ingest/bank/csv';
import { csvMappingSchema } from '../../src/ingest/bank/csv';
import { type BankFileStatement, renderCamt053, renderMt940 } from '../../src/sandbox/bank-files';

/**
 * The bad-input corpus of the bank statement doors (issue 23; docs/bad-input.md, "Bank statement doors"):
 * camt.053, MT940 and bank CSV files, each with the exact outcome of `recon bank import`:
 *   refused  the whole import, with the message `<file>: <where>: <problem>` (where: the line, and for
 *            camt the element; for CSV the column), the event store unchanged;
 *   accepted its entries booked, with the value a field is stored with (the documented treatment).
 * Each case builds its file from a valid statement of its own (its own statement id and references), so
 * that accepted cases never meet each other in the store.
 */

export const EUR: BankAccount = { id: 'DE89370400440532013000', currency: 'EUR', role: 'payouts', name: null };

export type Door = 'camt.053' | 'mt940' | 'csv';

export type Outcome =
  | { readonly refused: { readonly where: string | RegExp; readonly problem: RegExp } }
  | {
      readonly accepted: {
        readonly entries: number;
        /** a field of the first entry event's data and the value it is stored with */
        readonly field?: readonly [string, unknown];
      };
    };

export interface BankCase {
  readonly name: string;
  readonly door: Door;
  /** what the check is (the row of docs/bad-input.md's table) */
  readonly check: string;
  readonly bytes: string | Buffer;
  readonly mapping?: CsvMapping;
  /** the import's encoding (MT940, CSV) */
  readonly encoding?: string;
  readonly expect: Outcome;
}

/** The 1-based line of the first occurrence of `marker` (its first character). */
export function lineOf(text: string | Buffer, marker: string): number {
  const s = typeof text === 'string' ? text : text.toString('latin1');
  const at = s.indexOf(marker);
  if (at < 0) throw new Error(`marker ${JSON.stringify(marker)} not in the case's file`);
  let n = 1;
  for (let i = s.indexOf('\n'); i >= 0 && i < at; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

export const refused = (where: string | RegExp, problem: RegExp): Outcome => ({ refused: { where, problem } });
export const accepted = (entries: number, field?: readonly [string, unknown]): Outcome => ({
  accepted: { entries, field },
});

// ---------------------------------------------------------------- builders of valid files, one per case

export function statement(id: string, opts: { remittance?: string; name?: string } = {}): BankFileStatement {
  return {
    accountId: EUR.id,
    currency: 'EUR',
    statementId: id,
    openingDate: '2025-06-01',
    closingDate: '2025-06-02',
    openingBalance: 10_000n,
    entries: [
      {
        direction: 'credit',
        amount: 500n,
        bookingDate: '2025-06-01',
        bankRef: `${id}-A`,
        details: [{ remittance: opts.remittance ?? 'R-ONE', counterpartyName: opts.name ?? 'N-ONE' }],
      },
      {
        direction: 'debit',
        amount: 200n,
        bookingDate: '2025-06-02',
        bankRef: `${id}-B`,
        details: [{ remittance: 'R-TWO', counterpartyName: 'N-TWO' }],
      },
    ],
  };
}

/** The texts are put in raw, after rendering: `&#0;` stays a character reference, a NUL stays a NUL. */
export const camt = (id: string, opts: { remittance?: string; name?: string } = {}) =>
  renderCamt053(statement(id))
    .replace('<Ustrd>R-ONE<', `<Ustrd>${opts.remittance ?? 'R-ONE'}<`)
    .replace('<Nm>N-ONE<', `<Nm>${opts.name ?? 'N-ONE'}<`);
export const mt940 = (id: string, opts: { remittance?: string; name?: string } = {}) =>
  renderMt940(statement(id))
    .replace('SVWZ+R-ONE', `SVWZ+${opts.remittance ?? 'R-ONE'}`)
    .replace('?32N-ONE', `?32${opts.name ?? 'N-ONE'}`);

export const CSV_MAPPING: CsvMapping = csvMappingSchema.parse({
  account: EUR.id,
  currency: 'EUR',
  delimiter: ';',
  decimal: ',',
  dateFormat: 'dd.MM.yyyy',
  columns: {
    bookingDate: 'Buchungstag',
    amount: 'Betrag',
    balance: 'Saldo',
    bankRef: 'Referenz',
    remittance: 'Verwendungszweck',
    counterpartyName: 'Name',
  },
});

export const CSV_HEADER = 'Buchungstag;Name;Verwendungszweck;Referenz;Betrag;Saldo;Notiz';

/** A CSV statement of two rows; `cells` replaces cells of the first row by column name. */
export function csv(id: string, cells: Record<string, string> = {}, header = CSV_HEADER): string {
  const first: Record<string, string> = {
    Buchungstag: '01.06.2025',
    Name: 'N-ONE',
    Verwendungszweck: 'R-ONE',
    Referenz: `${id}-A`,
    Betrag: '5,00',
    Saldo: '105,00',
    Notiz: '',
    ...cells,
  };
  const second = ['02.06.2025', 'N-TWO', 'R-TWO', `${id}-B`, '-2,00', '103,00', ''];
  const cols = CSV_HEADER.split(';');
  return `${header}\n${cols.map((c) => first[c]).join(';')}\n${second.join(';')}\n`;
}

/** The mapping of a CSV case: its own statement id. */
export const csvMapping = (id: string, extra: Partial<CsvMapping> = {}): CsvMapping => ({
  ...CSV_MAPPING,
  statementId: id,
  ...extra,
});

export const camtWith = (id: string, from: string, to: string) => {
  const text = camt(id);
  if (!text.includes(from)) throw new Error(`${id}: ${from} not in the file`);
  return text.replace(from, to);
};
export const mt940With = (id: string, from: string | RegExp, to: string) => {
  const text = mt940(id);
  const out = text.replace(from, to);
  if (out === text) throw new Error(`${id}: ${String(from)} not in the file`);
  return out;
};
export const NS = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08';
export const latin = (s: string, encoding: 'latin1' = 'latin1') => Buffer.from(s, encoding);

// ---------------------------------------------------------------- MT940

/**
 * SWIFT's `/OCMT/` and `/CHGS/` codes of a statement line (the `:61:` supplementary details; docs/bank.md, "A charge
 * folded into a transfer"): a value that is not a currency and an amount refuses the file naming the line.
 */
function mt940Charges(
  m: (name: string, check: string, bytes: string | Buffer, expect: Outcome) => BankCase,
): BankCase[] {
  const out: BankCase[] = [];
  const line = (id: string, codes: string) => mt940With(id, /(:61:2506020602D[^\r]*\r\n)/, `$1${codes}\r\n`);
  const bad: [string, string, RegExp][] = [
    ['negative', '/OCMT/EUR1,00//CHGS/EUR-1,00/', /:61: \/CHGS\/ not an amount: "-1,00"/],
    ['16 digits', '/OCMT/EUR1,00//CHGS/EUR1234567890123456,00/', /:61: \/CHGS\/ amount too large/],
    ['three decimals', '/OCMT/EUR1,00//CHGS/EUR1,005/', /:61: \/CHGS\/ more than two decimals/],
    ['a currency that is not one', '/CHGS/eu1,00/', /:61: \/CHGS\/ not a currency code/],
    ['an original amount with a point', '/OCMT/EUR1.00//CHGS/EUR1,00/', /:61: \/OCMT\/ not an amount: "1.00"/],
  ];
  for (const [what, codes, problem] of bad) {
    const text = line(`M-CHG-${what}`, codes);
    out.push(m(`MT940 /CHGS/ ${what}`, 'charges', text, refused(`line ${lineOf(text, ':61:2506020602D')}`, problem)));
  }
  // in a coded :86: (the :61: details hold 4,096 characters at most): four lines of 251 codes, a line at most 4,096
  const many = mt940With(
    'M-CHG-MANY',
    /:86:177[^\r]*/,
    `:86:/REMI/R-TWO${Array.from({ length: 4 }, () => '/CHGS/EUR0,01'.repeat(251)).join('\r\n')}`,
  );
  out.push(
    m(
      'MT940 1,004 /CHGS/ codes',
      'charges',
      many,
      refused(`line ${lineOf(many, ':86:/REMI/R-TWO')}`, /:86: more than 1000 \/CHGS\/ codes/),
    ),
  );
  out.push(
    m(
      'MT940 /OCMT/ and /CHGS/: carried as written',
      'charges',
      line('M-CHG-OK', '/OCMT/EUR1,50//CHGS/EUR0,50/'),
      accepted(2, ['remittance', 'R-ONE']),
    ),
  );
  return out;
}

function mt940Cases(): BankCase[] {
  const m = (name: string, check: string, bytes: string | Buffer, expect: Outcome, encoding?: string): BankCase => ({
    name,
    door: 'mt940',
    check,
    bytes,
    expect,
    encoding,
  });
  const out: BankCase[] = [];
  const dates: [string, string | RegExp, string, RegExp][] = [
    ['opening 991231', /:60F:C250601/, ':60F:C991231', /:60F: date 1999-12-31 is before 2000-01-01/],
    ['opening 000000', /:60F:C250601/, ':60F:C000000', /:60F: not a day of the calendar: "2000-00-00"/],
    ['closing 491231', /:62F:C250602/, ':62F:C491231', /:62F: date 2049-12-31 is after/],
    ['entry 800101', /:61:250601/, ':61:800101', /:61: date 1980-01-01 is before 2000-01-01/],
    ['entry 250230', /:61:250601/, ':61:250230', /:61: not a day of the calendar: "2025-02-30"/],
  ];
  for (const [what, from, to, problem] of dates) {
    const text = mt940With(`M-D-${what.replace(' ', '-')}`, from, to);
    out.push(m(`MT940 ${what}`, 'dates', text, refused(`line ${lineOf(text, to)}`, problem)));
  }
  const twoAccounts = mt940With('M-25-TWICE', /(:25:[^\r]*\r\n)/, '$1:25:DE02100100100006820101\r\n');
  out.push(
    m(
      'MT940 two :25: in one message',
      ':25: once',
      twoAccounts,
      refused(
        `line ${lineOf(twoAccounts, ':25:DE02')}`,
        /a second :25: \(account\) in one message \(the first names DE89370400440532013000\)/,
      ),
    ),
  );
  const lateAccount = mt940(`M-25-LATE`).replace(/(:25:[^\r]*\r\n)(.*?:60F:[^\r]*\r\n)/s, '$2$1');
  out.push(
    m(
      'MT940 :25: after the opening balance',
      ':25: once',
      lateAccount,
      refused(/^line \d+$/, /:25: \(account\) after the opening balance :60F:/),
    ),
  );
  const nul = mt940('M-86-NUL', { remittance: 'R\u0000X' });
  out.push(
    m('MT940 NUL in :86:', 'text', nul, refused(`line ${lineOf(nul, 'R\u0000X')}`, /a NUL character at character \d+/)),
  );
  const esc = mt940('M-86-ESC', { remittance: 'R\u001b[2JX' });
  out.push(
    m('MT940 ESC in :86:', 'text', esc, refused(`line ${lineOf(esc, 'R\u001b')}`, /a control character \(U\+001B\)/)),
  );
  const bidiName = mt940('M-86-BIDI', { name: 'N\u202eX' });
  out.push(
    m(
      'MT940 bidi override in a name',
      'text',
      bidiName,
      refused(`line ${lineOf(bidiName, ':86:')}`, /:86: counterparty name: a bidirectional override/),
    ),
  );
  out.push(
    m(
      'MT940 card number in a remittance: masked',
      'text',
      mt940('M-86-PAN-R', { remittance: 'card 4111-1111-1111-1111' }),
      accepted(2, ['remittance', 'card 411111******1111']),
    ),
  );
  out.push(
    m(
      'MT940 bidi override in a remittance: kept',
      'text',
      mt940('M-86-BIDI-R', { remittance: 'R\u202eX' }),
      accepted(2, ['remittance', 'R\u202eX']),
    ),
  );
  const sub = (id: string, n: number, perLine: number) => {
    const parts = Array.from({ length: n }, (_, i) => `?2${i % 10}x`);
    const lines: string[] = [];
    for (let i = 0; i < parts.length; i += perLine) lines.push(parts.slice(i, i + perLine).join(''));
    return mt940With(id, /:86:[^\r]*/, `:86:166${lines.join('\r\n')}`);
  };
  const many = sub('M-86-200K', 200_000, 16);
  out.push(
    m(
      'MT940 :86: with 200,000 subfields',
      ':86: bounds',
      many,
      refused(`line ${lineOf(many, ':86:') + 100}`, /:86: more than 100 lines/),
    ),
  );
  const oneLine = sub('M-86-ONELINE', 200_000, 200_000);
  out.push(
    m(
      'MT940 :86: with 200,000 subfields on one line',
      ':86: bounds',
      oneLine,
      refused(`line ${lineOf(oneLine, ':86:')}`, /a line longer than 4096 characters/),
    ),
  );
  const k201 = sub('M-86-201', 201, 16);
  out.push(
    m(
      'MT940 :86: with 201 subfields',
      ':86: bounds',
      k201,
      refused(`line ${lineOf(k201, ':86:')}`, /:86: more than 200 subfields \(201\)/),
    ),
  );
  out.push(m('MT940 :86: with 150 subfields', ':86: bounds', sub('M-86-150', 150, 16), accepted(2)));
  const longLine = mt940('M-LINE', { remittance: 'x'.repeat(5000) });
  out.push(
    m(
      'MT940 line of 5,000 characters',
      'line length',
      longLine,
      refused(`line ${lineOf(longLine, 'xxxx')}`, /a line longer than 4096 characters/),
    ),
  );
  out.push(
    m(
      'MT940 windows-1252 configured',
      'encoding',
      latin(mt940('M-E-1252', { name: 'M\u00fcller' })),
      accepted(2, ['counterpartyName', 'M\u00fcller']),
      'windows-1252',
    ),
  );
  out.push(
    m(
      'MT940 ISO-8859-1 configured',
      'encoding',
      latin(mt940('M-E-8859', { remittance: 'Gr\u00fc\u00dfe' })),
      accepted(2, ['remittance', 'Gr\u00fc\u00dfe']),
      'iso-8859-1',
    ),
  );
  const raw = latin(mt940('M-E-RAW', { name: 'M\u00fcller' }));
  out.push(
    m(
      'MT940 undeclared Latin-1 byte',
      'encoding',
      raw,
      refused(`line ${lineOf(raw, 'M\u00fcller')}`, /bytes that are not UTF-8 \(0xFC/),
    ),
  );
  out.push(
    m(
      'MT940 configured encoding recon cannot decode',
      'encoding',
      mt940('M-E-BAD'),
      refused('encoding', /encoding "x-evil" is not one recon can decode/),
      'x-evil',
    ),
  );
  out.push(...mt940Charges(m));
  return out;
}

// ---------------------------------------------------------------- CSV

function csvCases(): BankCase[] {
  const k = (
    name: string,
    check: string,
    id: string,
    bytes: string | Buffer,
    expect: Outcome,
    extra: Partial<CsvMapping> = {},
    encoding?: string,
  ): BankCase => ({
    name,
    door: 'csv',
    check,
    bytes,
    expect,
    mapping: csvMapping(id, extra),
    encoding,
  });
  const out: BankCase[] = [];
  for (const [day, problem] of [
    ['01.01.0000', /date 0000-01-01 is before 2000-01-01/],
    ['01.01.0001', /date 0001-01-01 is before 2000-01-01/],
    ['01.01.1900', /date 1900-01-01 is before 2000-01-01/],
    ['31.12.9999', /date 9999-12-31 is after/],
    ['30.02.2025', /not a date in the format dd.MM.yyyy: "30.02.2025"/],
    ['2025-06-01', /not a date in the format dd.MM.yyyy: "2025-06-01"/],
  ] as const) {
    const id = `K-D-${day}`;
    out.push(
      k(
        `CSV booking day ${day}`,
        'dates',
        id,
        csv(id, { Buchungstag: day }),
        refused('line 2, column "Buchungstag"', problem),
      ),
    );
  }
  out.push(
    k(
      'CSV header naming a column twice',
      'header',
      'K-H-DUP',
      csv('K-H-DUP', {}, CSV_HEADER.replace('Notiz', 'Betrag')),
      refused('line 1 (header)', /column "Betrag" appears twice in the header/),
    ),
    k(
      'CSV columns without a name (a trailing delimiter)',
      'header',
      'K-H-EMPTY',
      csv('K-H-EMPTY')
        .split('\n')
        .map((l) => (l === '' ? l : `${l};`))
        .join('\n'),
      accepted(2),
    ),
    k(
      'CSV NUL in a header',
      'header',
      'K-H-NUL',
      csv('K-H-NUL', {}, CSV_HEADER.replace('Notiz', 'No\u0000tiz')),
      refused('line 1 (header)', /column "No\\u\{0\}tiz": a NUL character at character 3/),
    ),
    k(
      'CSV NUL in a cell not mapped',
      'text',
      'K-T-NUL',
      csv('K-T-NUL', { Notiz: 'a\u0000b' }),
      refused('line 2, column "Notiz"', /a NUL character at character 2/),
    ),
    k(
      'CSV NUL in the remittance',
      'text',
      'K-T-NUL2',
      csv('K-T-NUL2', { Verwendungszweck: 'R\u0000' }),
      refused('line 2, column "Verwendungszweck"', /a NUL character at character 2/),
    ),
    k(
      'CSV ESC in a name',
      'text',
      'K-T-ESC',
      csv('K-T-ESC', { Name: 'N\u001b[0m' }),
      refused('line 2, column "Name"', /a control character \(U\+001B\) at character 2/),
    ),
    k(
      'CSV bidi override in a name',
      'text',
      'K-T-BIDI',
      csv('K-T-BIDI', { Name: 'N\u202e' }),
      refused('line 2, column "Name"', /a bidirectional override \(U\+202E\)/),
    ),
    k(
      'CSV card number in a name: masked',
      'text',
      'K-T-PAN-N',
      csv('K-T-PAN-N', { Name: 'N 4111 1111 1111 1111' }),
      accepted(2, ['counterpartyName', 'N 411111******1111']),
    ),
    k(
      'CSV bidi override in a remittance: kept',
      'text',
      'K-T-BIDI-R',
      csv('K-T-BIDI-R', { Verwendungszweck: 'R\u202eX' }),
      accepted(2, ['remittance', 'R\u202eX']),
    ),
    k(
      'CSV quoted line break in a remittance: kept',
      'text',
      'K-T-LF',
      csv('K-T-LF', { Verwendungszweck: '"R\nX"' }),
      accepted(2, ['remittance', 'R\nX']),
    ),
    k(
      'CSV quoted line break in a name',
      'text',
      'K-T-LF-N',
      csv('K-T-LF-N', { Name: '"N\nX"' }),
      refused('line 3, column "Name"', /a control character \(U\+000A\) at character 2/),
    ),
    k(
      'CSV reference of 300 characters',
      'text',
      'K-T-REF',
      csv('K-T-REF', { Referenz: 'r'.repeat(300) }),
      refused('line 2, column "Referenz"', /longer than 256 characters \(300\)/),
    ),
    k(
      'CSV line of 70,000 characters',
      'line length',
      'K-L-LONG',
      csv('K-L-LONG', { Notiz: 'n'.repeat(70_000) }),
      refused('line 2', /Max Record Size/),
    ),
    k(
      'CSV cell of 5,000 characters not mapped',
      'text',
      'K-L-CELL',
      csv('K-L-CELL', { Notiz: 'n'.repeat(5000) }),
      refused('line 2, column "Notiz"', /longer than 4096 characters \(5000\)/),
    ),
    k(
      'CSV mapping encoding windows-1252',
      'encoding',
      'K-E-1252',
      latin(csv('K-E-1252', { Name: 'J\u00e4ger' })),
      accepted(2, ['counterpartyName', 'J\u00e4ger']),
      { encoding: 'windows-1252' },
    ),
    k(
      'CSV import encoding iso-8859-1',
      'encoding',
      'K-E-8859',
      latin(csv('K-E-8859', { Verwendungszweck: 'Gr\u00fc\u00dfe' })),
      accepted(2, ['remittance', 'Gr\u00fc\u00dfe']),
      {},
      'iso-8859-1',
    ),
    k(
      'CSV undeclared Latin-1 byte',
      'encoding',
      'K-E-RAW',
      latin(csv('K-E-RAW', { Name: 'J\u00e4ger' })),
      refused('line 2', /bytes that are not UTF-8 \(0xE4/),
    ),
    k(
      'CSV undeclared Latin-1 byte on line 3',
      'encoding',
      'K-E-RAW3',
      Buffer.concat([Buffer.from(csv('K-E-RAW3')), latin('x\u00ff\n')]),
      refused('line 4', /bytes that are not UTF-8 \(0xFF 0x0A\)/),
    ),
  );
  return out;
}

// ---------------------------------------------------------------- statement ids (across files and imports)

/** Imports of several files, in order; the last is the one refused or accepted. */
export interface SequenceCase {
  readonly name: string;
  readonly check: string;
  readonly files: readonly { readonly name: string; readonly bytes: string }[][];
  readonly expect: Outcome;
}

function withClosing(text: string, amount: string): string {
  // one more entry of `amount`, so that the statement still foots with another closing balance
  return text.replace(/(<Cd>CLBD<\/Cd>.*?<Amt Ccy="EUR">)([\d.]+)(<\/Amt>)/s, `$1${amount}$3`);
}

export function sequenceCases(): SequenceCase[] {
  const a = camt('S-REUSED');
  const other = withClosing(a, '103.01').replace('<Amt Ccy="EUR">2.00</Amt>', '<Amt Ccy="EUR">1.99</Amt>');
  const mtA = mt940('S-MT-REUSED');
  const mtOther = mtA
    .replace(':61:2506020602D2,00', ':61:2506020602D1,99')
    .replace(':62F:C250602EUR103,00', ':62F:C250602EUR103,01');
  return [
    {
      name: 'camt statement id reused with other content in a later import',
      check: 'statement id',
      files: [[{ name: 's-a.xml', bytes: a }], [{ name: 's-b.xml', bytes: other }]],
      expect: refused(
        /statement id S-REUSED of account DE89370400440532013000 \(Stmt\[0\]\)/,
        /already recorded with other content/,
      ),
    },
    {
      name: 'camt the same statement again in a later import: known',
      check: 'statement id',
      files: [[{ name: 's-c.xml', bytes: camt('S-AGAIN') }], [{ name: 's-d.xml', bytes: camt('S-AGAIN') }]],
      expect: accepted(0),
    },
    {
      name: 'camt statement id twice in one import with other content',
      check: 'statement id',
      files: [
        [
          { name: 's-e.xml', bytes: camt('S-PAIR') },
          {
            name: 's-f.xml',
            bytes: withClosing(camt('S-PAIR'), '103.01').replace(
              '<Amt Ccy="EUR">2.00</Amt>',
              '<Amt Ccy="EUR">1.99</Amt>',
            ),
          },
        ],
      ],
      expect: refused(
        /statement id S-PAIR of account DE89370400440532013000 \(Stmt\[0\]\)/,
        /also in .*s-e.xml with other content/,
      ),
    },
    {
      name: 'camt statement id twice in one file with other content',
      check: 'statement id',
      files: [[{ name: 's-g.xml', bytes: twoStatementsOneId() }]],
      expect: refused(
        /statement id S-DOUBLE of account DE89370400440532013000 \(Stmt\[1\]\)/,
        /given twice in the file with other content/,
      ),
    },
    {
      name: 'MT940 statement id reused with other content in a later import',
      check: 'statement id',
      files: [[{ name: 's-h.sta', bytes: mtA }], [{ name: 's-i.sta', bytes: mtOther }]],
      expect: refused(
        /statement id S-MT-REUSED\/00001\/001 of account DE89370400440532013000/,
        /already recorded with other content/,
      ),
    },
  ];
}

function twoStatementsOneId(): string {
  const one = camt('S-DOUBLE');
  const stmt = /<Stmt>.*<\/Stmt>\n/s.exec(one)![0];
  const second = withClosing(stmt, '103.01').replace('<Amt Ccy="EUR">2.00</Amt>', '<Amt Ccy="EUR">1.99</Amt>');
  return one.replace('</BkToCstmrStmt>', `${second}</BkToCstmrStmt>`);
}

/** The MT940 and CSV cases; the camt.053 ones are in bank-camt.cases.ts. */
export const mt940AndCsvCases: readonly BankCase[] = [...mt940Cases(), ...csvCases()];

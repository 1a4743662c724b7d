import { type BankFileStatement, renderCamt053 } from '../../src/sandbox/bank-files';
import {
  accepted,
  type BankCase,
  camt,
  camtWith,
  latin,
  lineOf,
  NS,
  type Outcome,
  refused,
  statement,
} from './bank-files.cases';

/** The camt.053 cases of the bank corpus (test/bad-input/bank-files.cases.ts says what a case is). */

function camtDates(): BankCase[] {
  const out: BankCase[] = [];
  const bad: [string, RegExp][] = [
    ['0000-01-01', /date 0000-01-01 is before 2000-01-01/],
    ['0001-01-01', /date 0001-01-01 is before 2000-01-01/],
    ['1900-01-01', /date 1900-01-01 is before 2000-01-01/],
    ['1999-12-31', /date 1999-12-31 is before 2000-01-01/],
    ['9999-12-31', /date 9999-12-31 is after \d{4}-\d{2}-\d{2}/],
    ['2025-02-30', /not a day of the calendar: "2025-02-30"/],
    ['2025-6-1', /not a date in the form YYYY-MM-DD: "2025-6-1"/],
    ['+02025-06-01', /not a date in the form YYYY-MM-DD/],
  ];
  for (const [day, problem] of bad) {
    const id = `C-BD-${day}`;
    const text = camtWith(id, '<BookgDt><Dt>2025-06-01</Dt>', `<BookgDt><Dt>${day}</Dt>`);
    out.push({
      name: `camt BookgDt ${day}`,
      door: 'camt.053',
      check: 'dates',
      bytes: text,
      expect: refused(
        new RegExp(`line ${lineOf(text, `<Dt>${day}`)}, column \\d+ \\(Stmt\\[0\\]/Ntry/BookgDt/Dt entry 1\\)`),
        problem,
      ),
    });
  }
  for (const [day, problem] of bad.slice(0, 5)) {
    const id = `C-VD-${day}`;
    const text = camtWith(id, '<ValDt><Dt>2025-06-01</Dt>', `<ValDt><Dt>${day}</Dt>`);
    out.push({
      name: `camt ValDt ${day}`,
      door: 'camt.053',
      check: 'dates',
      bytes: text,
      expect: refused(new RegExp(`line ${lineOf(text, `<Dt>${day}`)}, .*Ntry/ValDt/Dt entry 1`), problem),
    });
  }
  {
    const text = camtWith('C-BAL-1900', '<Dt><Dt>2025-06-01</Dt></Dt></Bal>', '<Dt><Dt>1900-01-01</Dt></Dt></Bal>');
    out.push({
      name: 'camt opening balance 1900-01-01',
      door: 'camt.053',
      check: 'dates',
      bytes: text,
      expect: refused(
        new RegExp(`line ${lineOf(text, '1900-01-01')}, .*Stmt\\[0\\]/Bal/Dt/Dt\\)`),
        /1900-01-01 is before/,
      ),
    });
  }
  const dateTimes: [string, Outcome | RegExp][] = [
    ['2025-01-02Tgarbage', /not a date-time in the form YYYY-MM-DDTHH:MM:SS\[zone\]: "2025-01-02Tgarbage"/],
    ['2025-06-01 10:00:00', /not a date-time/],
    ['2025-06-01T25:00:00', /not a date-time/],
    ['2025-06-01T10:00:00+15:00', /not a date-time/],
    ['0000-01-01T00:00:00', /date 0000-01-01 is before 2000-01-01/],
    ['9999-12-31T23:59:59Z', /date 9999-12-31 is after/],
    ['2025-06-01T10:00:00+02:00', accepted(2, ['bookingDate', '2025-06-01'])],
    ['2025-06-01T23:30:00.123Z', accepted(2, ['bookingDate', '2025-06-01'])],
    ['2025-06-01T08:00:00', accepted(2, ['bookingDate', '2025-06-01'])],
  ];
  for (const [dt, expect] of dateTimes) {
    const id = `C-DTTM-${dt}`;
    const fixed = camtWith(id, '<BookgDt><Dt>2025-06-01</Dt>', `<BookgDt><DtTm>${dt}</DtTm>`);
    out.push({
      name: `camt BookgDt/DtTm ${dt}`,
      door: 'camt.053',
      check: 'dates',
      bytes: fixed,
      expect:
        expect instanceof RegExp
          ? refused(new RegExp(`line ${lineOf(fixed, `<DtTm>${dt}`)}, .*Ntry/BookgDt/DtTm entry 1`), expect)
          : expect,
    });
  }
  {
    const text = camtWith('C-DT-TIME', '<BookgDt><Dt>2025-06-01</Dt>', '<BookgDt><Dt>2025-06-01T00:00:00</Dt>');
    out.push({
      name: 'camt Dt with a time',
      door: 'camt.053',
      check: 'dates',
      bytes: text,
      expect: refused(/BookgDt\/Dt entry 1/, /not a date in the form YYYY-MM-DD: "2025-06-01T00:00:00"/),
    });
  }
  return out;
}

function camtNamespaces(): BankCase[] {
  const ns: [string, Outcome][] = [
    ['urn:evil', refused(/line 3, column \d+ \(Document\/BkToCstmrStmt\)/, /namespace "urn:evil" is not a camt.053/)],
    [
      'urn:iso:std:iso:20022:tech:xsd:camt.052.001.08',
      refused(/BkToCstmrStmt/, /namespace "urn:iso:std:iso:20022:tech:xsd:camt.052.001.08" is not a camt.053/),
    ],
    [
      'urn:iso:std:iso:20022:tech:xsd:camt.053.001.01',
      refused(/BkToCstmrStmt/, /namespace "urn:iso:std:iso:20022:tech:xsd:camt.053.001.01" is not a camt.053/),
    ],
    ['urn:iso:std:iso:20022:tech:xsd:camt.053.001.14', refused(/BkToCstmrStmt/, /camt.053.001.14" is not a camt.053/)],
    ['urn:iso:std:iso:20022:tech:xsd:camt.053.001.02', accepted(2)],
    ['urn:iso:std:iso:20022:tech:xsd:camt.053.001.13', accepted(2)],
  ];
  const out: BankCase[] = ns.map(([uri, expect]) => ({
    name: `camt namespace ${uri}`,
    door: 'camt.053',
    check: 'namespace and version',
    bytes: camtWith(`C-NS-${uri.slice(-6)}`, NS, uri),
    expect,
  }));
  out.push(
    {
      name: 'camt without a namespace',
      door: 'camt.053',
      check: 'namespace and version',
      bytes: camtWith('C-NS-NONE', ` xmlns="${NS}"`, ''),
      expect: refused(/BkToCstmrStmt/, /namespace \(none\) is not a camt.053/),
    },
    {
      name: 'camt statement element rebinding the namespace',
      door: 'camt.053',
      check: 'namespace and version',
      bytes: camtWith('C-NS-REBIND', '<BkToCstmrStmt>', '<BkToCstmrStmt xmlns="urn:evil">'),
      expect: refused(/BkToCstmrStmt/, /namespace "urn:evil" is not a camt.053/),
    },
    {
      name: 'camt namespace changed inside the statement',
      door: 'camt.053',
      check: 'namespace and version',
      bytes: camtWith('C-NS-INSIDE', '<Ntry>', '<Ntry xmlns="urn:evil">'),
      expect: refused(/Stmt\[0\]\/Ntry/, /namespace "urn:evil" declared inside the statement/),
    },
    {
      name: 'camt element of another prefix inside the statement',
      door: 'camt.053',
      check: 'namespace and version',
      bytes: camtWith('C-NS-PREFIX', '<Ntry>', '<e:Ntry xmlns:e="urn:evil">').replace('</Ntry>', '</e:Ntry>'),
      expect: refused(/Stmt\[0\]\/Ntry/, /element "e:Ntry" is not in the statement's namespace/),
    },
    {
      name: 'camt prefixed document in its namespace',
      door: 'camt.053',
      check: 'namespace and version',
      bytes: camt('C-NS-PREFIXED')
        .replace(`<Document xmlns="${NS}">`, `<c:Document xmlns:c="${NS}">`)
        .replace('</Document>', '</c:Document>')
        .replace(/<(\/?)(?!\?|c:Document)([A-Za-z])/g, '<$1c:$2'),
      expect: accepted(2),
    },
    {
      name: 'camt.052 report element',
      door: 'camt.053',
      check: 'namespace and version',
      bytes: camt('C-052').replace(/BkToCstmrStmt/g, 'BkToCstmrAcctRpt'),
      expect: refused(/BkToCstmrAcctRpt/, /this is not a camt.053 statement \(BkToCstmrAcctRpt/),
    },
  );
  return out;
}

/** A statement of `n` entries whose Acct (or Id) comes after them. */
function camtLateAccount(id: string, n: number, element: 'Acct' | 'Id'): string {
  const s = statement(id);
  const many: BankFileStatement = {
    ...s,
    entries: Array.from({ length: n }, (_, i) => ({
      direction: 'credit' as const,
      amount: 100n,
      bookingDate: '2025-06-01',
      bankRef: `${id}-${i}`,
    })),
  };
  const text = renderCamt053(many);
  const part = element === 'Acct' ? /<Acct>.*?<\/Acct>\n/s : /<Id>[^<]*<\/Id>(?=<ElctrncSeqNb>)/;
  const moved = part.exec(text)![0];
  return text.replace(moved, '').replace('</Stmt>', `${moved}</Stmt>`);
}

function camtStructure(): BankCase[] {
  const deep = (depth: number) =>
    camt('C-DEEP').replace('<GrpHdr>', `${'<X>'.repeat(depth)}${'</X>'.repeat(depth)}<GrpHdr>`);
  const late5000 = camtLateAccount('C-LATE-5000', 5000, 'Acct');
  const late2 = camtLateAccount('C-LATE-2', 2, 'Acct');
  const lateId = camtLateAccount('C-LATE-ID', 2, 'Id');
  const twice = camt('C-TWICE-ACCT').replace(/(<Acct>.*?<\/Acct>\n)/s, '$1$1');
  return [
    {
      name: 'camt Acct after its 5,000 entries',
      door: 'camt.053',
      check: 'Acct after the entries',
      bytes: late5000,
      expect: refused(
        new RegExp(`^line ${lineOf(late5000, '<Acct>')}, column \\d+ \\(Stmt\\[0\\]/Acct\\)$`),
        /Acct after the statement's entries: camt.053 gives the statement's Id and Acct before its first Ntry/,
      ),
    },
    {
      name: 'camt Acct after its 2 entries',
      door: 'camt.053',
      check: 'Acct after the entries',
      bytes: late2,
      expect: refused(new RegExp(`line ${lineOf(late2, '<Acct>')}, `), /Acct after the statement's entries/),
    },
    {
      name: 'camt Stmt/Id after its entries',
      door: 'camt.053',
      check: 'Acct after the entries',
      bytes: lateId,
      expect: refused(/Stmt\[0\]\/Id/, /Id after the statement's entries/),
    },
    {
      name: 'camt two Acct in one statement',
      door: 'camt.053',
      check: 'Acct after the entries',
      bytes: twice,
      expect: refused(/Stmt\[0\]\/Acct/, /a second Acct in one statement/),
    },
    {
      name: 'camt nested 100,000 deep',
      door: 'camt.053',
      check: 'nesting depth',
      bytes: deep(100_000),
      expect: refused(/line 4, column \d+/, /elements nested deeper than 64 levels/),
    },
    {
      name: 'camt nested 70 deep',
      door: 'camt.053',
      check: 'nesting depth',
      bytes: deep(70),
      expect: refused(/line 4, column \d+/, /elements nested deeper than 64 levels/),
    },
    {
      name: 'camt nested 50 deep beside the statement',
      door: 'camt.053',
      check: 'nesting depth',
      bytes: deep(50),
      expect: accepted(2),
    },
    {
      name: 'camt text of 100,000 characters',
      door: 'camt.053',
      check: 'text length',
      bytes: camtWith('C-HUGE-TEXT', '<Ustrd>R-ONE', `<Ustrd>${'x'.repeat(100_000)}`),
      expect: refused(/RmtInf\/Ustrd/, /a text, comment or CDATA longer than 65536 characters/),
    },
    {
      name: 'camt comment of 100,000 characters',
      door: 'camt.053',
      check: 'text length',
      bytes: camtWith('C-HUGE-COMMENT', '<GrpHdr>', `<!--${'c'.repeat(100_000)}--><GrpHdr>`),
      expect: refused(/BkToCstmrStmt/, /a text, comment or CDATA longer than 65536 characters/),
    },
    {
      name: 'camt element name of 300,000 characters',
      door: 'camt.053',
      check: 'text length',
      bytes: camtWith('C-HUGE-NAME', '<GrpHdr>', `<${'N'.repeat(300_000)}/><GrpHdr>`),
      expect: refused(/BkToCstmrStmt/, /a name longer than 65536 characters/),
    },
    {
      name: 'camt entity reference of 300,000 characters',
      door: 'camt.053',
      check: 'text length',
      bytes: camtWith('C-HUGE-ENTITY', '<Ustrd>R-ONE', `<Ustrd>&${'e'.repeat(300_000)};`),
      expect: refused(/RmtInf\/Ustrd/, /a name longer than 65536 characters/),
    },
  ];
}

function camtCurrencies(): BankCase[] {
  const noCcy = (id: string) => camt(id).replace('<Ccy>EUR</Ccy>', '');
  const usdOnEur = camtWith(
    'C-USD-ACCT',
    '<Amt Ccy="EUR">5.00</Amt><CdtDbtInd>CRDT',
    '<Amt Ccy="USD">5.00</Amt><CdtDbtInd>CRDT',
  );
  const usdNoCcy = noCcy('C-USD-NOCCY').replace(
    '<Amt Ccy="EUR">5.00</Amt><CdtDbtInd>CRDT',
    '<Amt Ccy="USD">5.00</Amt><CdtDbtInd>CRDT',
  );
  const allUsd = noCcy('C-USD-ALL').replace(/<Ntry><Amt Ccy="EUR">/g, '<Ntry><Amt Ccy="USD">');
  return [
    {
      name: 'camt entry in USD on an account in EUR (Acct/Ccy)',
      door: 'camt.053',
      check: 'entry currency',
      bytes: usdOnEur,
      expect: refused(/Stmt\[0\]\/Ntry entry 1/, /entry in USD on a statement in EUR \(one currency per statement\)/),
    },
    {
      name: 'camt no Acct/Ccy, entries in USD and EUR',
      door: 'camt.053',
      check: 'entry currency',
      bytes: usdNoCcy,
      expect: refused(
        /Ntry entry 2/,
        /entry in EUR, an earlier entry of the statement \(line 9, .*entry 1\)\) in USD \(one currency per statement\)/,
      ),
    },
    {
      name: 'camt no Acct/Ccy, every entry in USD, balances in EUR',
      door: 'camt.053',
      check: 'entry currency',
      bytes: allUsd,
      expect: refused(
        /statement C-USD-ALL of account DE89370400440532013000/,
        /entries in USD \(.*\), the statement is in EUR/,
      ),
    },
    {
      name: 'camt no Acct/Ccy, everything in EUR',
      door: 'camt.053',
      check: 'entry currency',
      bytes: noCcy('C-EUR-NOCCY'),
      expect: accepted(2, ['currency', 'EUR']),
    },
    {
      name: 'camt a currency that is not three capitals',
      door: 'camt.053',
      check: 'entry currency',
      bytes: camtWith(
        'C-CCY-LOWER',
        '<Amt Ccy="EUR">5.00</Amt><CdtDbtInd>CRDT',
        '<Amt Ccy="eur">5.00</Amt><CdtDbtInd>CRDT',
      ),
      expect: refused(/Ntry\/Amt\/@Ccy/, /not a currency code \(three capital letters\): "eur"/),
    },
  ];
}

function camtTexts(): BankCase[] {
  const c = (name: string, id: string, opts: { remittance?: string; name?: string }, expect: Outcome): BankCase => ({
    name,
    door: 'camt.053',
    check: 'text',
    bytes: camt(id, opts),
    expect,
  });
  return [
    c(
      'camt NUL (&#0;) in a name',
      'C-T-NUL',
      { name: 'N&#0;X' },
      refused(/line 9, column \d+$/, /not well-formed XML: malformed character entity/),
    ),
    c(
      'camt ESC in a name',
      'C-T-ESC',
      { name: 'N\u001b[31mX' },
      refused(/line 9, column \d+$/, /not well-formed XML: disallowed character/),
    ),
    c(
      'camt lone surrogate (&#xD800;) in a remittance',
      'C-T-SUR',
      { remittance: 'R&#xD800;X' },
      refused(/line 9/, /malformed character entity/),
    ),
    c(
      'camt C1 control (CSI, U+009B) in a name',
      'C-T-CSI',
      { name: 'N\u009bX' },
      refused(/Dbtr\/Pty\/Nm entry 1/, /a control character \(U\+009B\) at character 2/),
    ),
    c(
      'camt NEL (&#x85;) in a remittance',
      'C-T-NEL',
      { remittance: 'R&#x85;X' },
      refused(/RmtInf\/Ustrd entry 1/, /a control character \(U\+0085\) at character 2/),
    ),
    c(
      'camt right-to-left override in a name',
      'C-T-BIDI-NAME',
      { name: 'invoice\u202Efdp.exe' },
      refused(/Nm entry 1/, /a bidirectional override \(U\+202E\) at character 8/),
    ),
    c(
      'camt card number in a remittance: masked',
      'C-T-PAN-RMT',
      { remittance: 'card 4111111111111111' },
      accepted(2, ['remittance', 'card 411111******1111']),
    ),
    c(
      'camt right-to-left override in a remittance: kept',
      'C-T-BIDI-RMT',
      { remittance: 'R\u202EX' },
      accepted(2, ['remittance', 'R\u202EX']),
    ),
    c(
      'camt line break in a name',
      'C-T-LF-NAME',
      { name: 'N&#10;X' },
      refused(/Nm entry 1/, /a control character \(U\+000A\) at character 2/),
    ),
    c(
      'camt line break in a remittance: kept',
      'C-T-LF-RMT',
      { remittance: 'R&#10;X' },
      accepted(2, ['remittance', 'R\nX']),
    ),
    c(
      'camt name of 201 characters',
      'C-T-LONG-NAME',
      { name: 'n'.repeat(201) },
      refused(/Nm entry 1/, /longer than 200 characters \(201\)/),
    ),
    c(
      'camt remittance of 5,000 characters',
      'C-T-LONG-RMT',
      { remittance: 'r'.repeat(5000) },
      refused(/RmtInf\/Ustrd entry 1/, /longer than 4096 characters \(5000\)/),
    ),
    c(
      'camt astral characters in a name: kept',
      'C-T-ASTRAL',
      { name: 'Caf\u00e9 \ud83d\ude00' },
      accepted(2, ['counterpartyName', 'Caf\u00e9 \ud83d\ude00']),
    ),
    c(
      'camt injection strings: data',
      'C-T-INJ',
      { remittance: '=HYPERLINK("x"); DROP TABLE es_events; --' },
      accepted(2, ['remittance', '=HYPERLINK("x"); DROP TABLE es_events; --']),
    ),
    {
      name: 'camt AcctSvcrRef of 300 characters',
      door: 'camt.053',
      check: 'text',
      bytes: camtWith('C-T-REF', '<AcctSvcrRef>C-T-REF-A', `<AcctSvcrRef>${'a'.repeat(300)}`),
      expect: refused(/Ntry\/AcctSvcrRef entry 1/, /longer than 256 characters \(300\)/),
    },
    {
      name: 'camt empty AcctSvcrRef: no reference',
      door: 'camt.053',
      check: 'text',
      bytes: camtWith('C-T-EMPTYREF', '<AcctSvcrRef>C-T-EMPTYREF-A</AcctSvcrRef>', '<AcctSvcrRef></AcctSvcrRef>'),
      expect: accepted(2, ['bankRef', null]),
    },
    {
      name: 'camt statement id with a control character',
      door: 'camt.053',
      check: 'text',
      bytes: camtWith('C-T-STMTID', '<Stmt><Id>C-T-STMTID', '<Stmt><Id>C-T-\u0085STMTID'),
      expect: refused(/Stmt\[0\]\/Id\)/, /a control character \(U\+0085\)/),
    },
  ];
}

function camtEncodings(): BankCase[] {
  const declared = (id: string, encoding: string, name: string, bytes: (s: string) => Buffer) =>
    bytes(camt(id, { name }).replace('encoding="UTF-8"', `encoding="${encoding}"`));
  const win1251 = (s: string) => Buffer.from(new Uint8Array([...s].map((ch) => CP1251[ch] ?? ch.charCodeAt(0))));
  const undeclared = latin(camt('C-E-RAW', { name: 'Caf\u00e9' }));
  return [
    {
      name: 'camt declared ISO-8859-1',
      door: 'camt.053',
      check: 'encoding',
      bytes: declared('C-E-8859', 'ISO-8859-1', 'Caf\u00e9 M\u00fcller', (s) => latin(s)),
      expect: accepted(2, ['counterpartyName', 'Caf\u00e9 M\u00fcller']),
    },
    {
      name: 'camt declared windows-1252 (euro sign 0x80)',
      door: 'camt.053',
      check: 'encoding',
      bytes: declared('C-E-1252', 'windows-1252', 'N \u20ac', (s) =>
        Buffer.from(s.replace('\u20ac', '\u0080'), 'latin1'),
      ),
      expect: accepted(2, ['counterpartyName', 'N \u20ac']),
    },
    {
      name: 'camt declared windows-1251 (Cyrillic)',
      door: 'camt.053',
      check: 'encoding',
      bytes: declared('C-E-1251', 'windows-1251', '\u041f\u0440\u0438\u0432\u0430\u0442', win1251),
      expect: accepted(2, ['counterpartyName', '\u041f\u0440\u0438\u0432\u0430\u0442']),
    },
    {
      name: 'camt UTF-16LE with a byte-order mark',
      door: 'camt.053',
      check: 'encoding',
      bytes: Buffer.concat([
        Buffer.from([0xff, 0xfe]),
        Buffer.from(
          camt('C-E-UTF16', { name: '\u00c5sa' }).replace('encoding="UTF-8"', 'encoding="UTF-16"'),
          'utf16le',
        ),
      ]),
      expect: accepted(2, ['counterpartyName', '\u00c5sa']),
    },
    {
      name: 'camt undeclared Latin-1 byte',
      door: 'camt.053',
      check: 'encoding',
      bytes: undeclared,
      expect: refused(
        `line ${lineOf(undeclared, 'Caf')}`,
        /bytes that are not UTF-8 \(0xE9 0x3C 0x2F 0x4E\): declare the file's encoding/,
      ),
    },
    {
      name: 'camt declared UTF-8 with a Latin-1 byte',
      door: 'camt.053',
      check: 'encoding',
      bytes: latin(camt('C-E-LIE', { remittance: 'na\u00efve' })),
      expect: refused(/^line 9$/, /bytes that are not UTF-8 \(0xEF 0x76 0x65 0x3C\)/),
    },
    {
      name: 'camt UTF-8 encoded surrogate (CESU bytes)',
      door: 'camt.053',
      check: 'encoding',
      bytes: Buffer.concat([
        Buffer.from(camt('C-E-CESU', { name: 'NQ' }).split('NQ')[0]!),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from(camt('C-E-CESU', { name: 'NQ' }).split('NQ')[1]!),
      ]),
      expect: refused(/^line 9$/, /bytes that are not UTF-8 \(0xED 0xA0 0x80/),
    },
    {
      name: 'camt declared encoding recon cannot decode',
      door: 'camt.053',
      check: 'encoding',
      bytes: camt('C-E-EBCDIC').replace('encoding="UTF-8"', 'encoding="x-ebcdic-evil"'),
      expect: refused('line 1 (XML declaration)', /encoding "x-ebcdic-evil" is not one recon can decode/),
    },
  ];
}

/**
 * The charges a transfer states (camt `TxDtls/Chrgs`, `Ntry/Chrgs`; docs/bank.md, "A charge folded into a
 * transfer"): an amount that is not one refuses the file naming the element and its line, and nothing of it is
 * imported (the harness counts the store), so no charge is ever split half read.
 */
function camtCharges(): BankCase[] {
  const detail = (id: string, charges: string, txAmt = '4.00') =>
    camtWith(
      id,
      '</Refs>',
      `</Refs><AmtDtls><TxAmt><Amt Ccy="EUR">${txAmt}</Amt></TxAmt></AmtDtls>\n<Chrgs>${charges}</Chrgs>\n`,
    );
  const record = (amt: string, more = '', ccy = 'EUR') => `<Rcrd><Amt Ccy="${ccy}">${amt}</Amt>${more}</Rcrd>`;
  const at = (text: string, marker: string, path: string) =>
    new RegExp(`line ${lineOf(text, marker)}, column \\d+ \\(Stmt\\[0\\]/Ntry/${path} entry 1\\)`);
  const out: BankCase[] = [];
  const amounts: [string, RegExp][] = [
    ['-1.50', /not an amount: "-1.50"/],
    ['1234567890123456.00', /amount too large: 1234567890123456.00/],
    // above every door's largest amount: a workbook holds 15 significant digits exactly (review 16)
    ['999999999999999.99', /amount too large: 999999999999999.99 \(at most 10000000000000.00\)/],
    ['1.505', /more than two decimals: 1.505/],
    ['1,50', /not an amount: "1,50"/],
    ['1e3', /not an amount: "1e3"/],
    ['', /not an amount: ""/],
  ];
  for (const [amt, problem] of amounts) {
    const text = detail(`C-CHG-${amt}`, record(amt, '<ChrgInclInd>true</ChrgInclInd>'));
    out.push({
      name: `camt Chrgs/Rcrd/Amt ${JSON.stringify(amt)}`,
      door: 'camt.053',
      check: 'charges',
      bytes: text,
      expect: refused(at(text, '<Rcrd>', 'NtryDtls/TxDtls/Chrgs/Rcrd/Amt'), problem),
    });
  }
  const cases: [string, string, string, string, RegExp][] = [
    // name, charges, marker of the line, element path, problem
    [
      'a currency that is not one',
      record('1.50', '', 'eur1'),
      '<Rcrd>',
      'NtryDtls/TxDtls/Chrgs/Rcrd/Amt/@Ccy',
      /currency/i,
    ],
    [
      'ChrgInclInd not a boolean',
      record('1.50', '<ChrgInclInd>maybe</ChrgInclInd>'),
      '<Rcrd>',
      'NtryDtls/TxDtls/Chrgs/Rcrd/ChrgInclInd',
      /expected true or false, got "maybe"/,
    ],
    [
      'CdtDbtInd unknown',
      record('1.50', '<CdtDbtInd>XX</CdtDbtInd>'),
      '<Rcrd>',
      'NtryDtls/TxDtls/Chrgs/Rcrd/CdtDbtInd',
      /expected CRDT or DBIT, got "XX"/,
    ],
    [
      'a record without Amt',
      '<Rcrd><ChrgInclInd>true</ChrgInclInd></Rcrd>',
      '<Rcrd>',
      'NtryDtls/TxDtls/Chrgs/Rcrd',
      /a charge record without Amt/,
    ],
    [
      'TtlChrgsAndTaxAmt negative',
      '<TtlChrgsAndTaxAmt Ccy="EUR">-1.50</TtlChrgsAndTaxAmt>',
      '<TtlChrgsAndTaxAmt',
      'NtryDtls/TxDtls/Chrgs/TtlChrgsAndTaxAmt',
      /not an amount: "-1.50"/,
    ],
    [
      '.001.02 Chrgs/Amt too large',
      '<Amt Ccy="EUR">9999999999999999</Amt>',
      '<Chrgs>',
      'NtryDtls/TxDtls/Chrgs/Amt',
      /amount too large/,
    ],
  ];
  for (const [name, charges, marker, path, problem] of cases) {
    const text = detail(`C-CHG-${name}`, charges);
    out.push({
      name: `camt charges: ${name}`,
      door: 'camt.053',
      check: 'charges',
      bytes: text,
      expect: refused(at(text, marker, path), problem),
    });
  }
  {
    const text = camtWith('C-CHG-NTRY', '<NtryDtls>', `<Chrgs>\n${record('-0.01')}</Chrgs>\n<NtryDtls>`);
    out.push({
      name: 'camt Ntry/Chrgs/Rcrd/Amt negative',
      door: 'camt.053',
      check: 'charges',
      bytes: text,
      expect: refused(at(text, '<Rcrd>', 'Chrgs/Rcrd/Amt'), /not an amount: "-0.01"/),
    });
  }
  {
    const text = detail('C-CHG-MANY', record('0.01').repeat(1_001));
    out.push({
      name: 'camt 1,001 charge records in one entry',
      door: 'camt.053',
      check: 'charges',
      bytes: text,
      expect: refused(/Stmt\[0\]\/Ntry\/NtryDtls\/TxDtls\/Chrgs\/Rcrd entry 1/, /more than 1000 charges in one entry/),
    });
  }
  out.push(
    {
      name: 'camt charges stated: carried as written',
      door: 'camt.053',
      check: 'charges',
      bytes: detail('C-CHG-OK', record('1.00', '<CdtDbtInd>DBIT</CdtDbtInd><ChrgInclInd>true</ChrgInclInd>'), '4.00'),
      expect: accepted(2, ['charges', [{ amount: '100', currency: 'EUR', direction: 'debit', included: true }]]),
    },
    {
      name: 'camt charge of 15 digits, the largest amount a door takes: kept exact (not split: it does not add up)',
      door: 'camt.053',
      check: 'charges',
      bytes: detail('C-CHG-BIG', record('9999999999999.99')),
      expect: accepted(2, [
        'charges',
        [{ amount: '999999999999999', currency: 'EUR', direction: null, included: null }],
      ]),
    },
  );
  return out;
}

/** windows-1251 bytes of the Cyrillic letters the cases use. */
const CP1251: Record<string, number> = {
  '\u041f': 0xcf,
  '\u0440': 0xf0,
  '\u0438': 0xe8,
  '\u0432': 0xe2,
  '\u0430': 0xe0,
  '\u0442': 0xf2,
};

export const camtCases: readonly BankCase[] = [
  ...camtDates(),
  ...camtNamespaces(),
  ...camtStructure(),
  ...camtCurrencies(),
  ...camtTexts(),
  ...camtEncodings(),
  ...camtCharges(),
];

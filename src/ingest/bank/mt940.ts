import type { Readable } from 'node:stream';
import {
  checkCurrency,
  checkText,
  FREE_TEXT,
  maskPans,
  NAME_TEXT,
  quoteForMessage,
  REFERENCE_TEXT,
  type TextPolicy,
} from '../../input-rules';
import { minorUnits } from './amount';
import { dayOfYymmdd } from './dates';
import { decodedText, UndecodableBytes, UnknownEncoding } from './decode';
import { LineTooLong, linesOf } from './lines';
import { MAX_CHARGES } from './camt-rules';
import { entryInformation, subfieldCount, swiftAmountCodes } from './mt940-details';
import {
  BankFileError,
  type BankFileItem,
  type BankFileParser,
  type ParsedBalance,
  type ParsedCharge,
  type ParsedEntry,
  type StatementHead,
} from './types';

/**
 * MT940 (SWIFT customer statement), with or without the SWIFT block envelope ({1:…}{2:…}{4: … -}), read
 * line by line. Fields start with `:tag:` at the beginning of a line; any other line continues the field
 * before it (a `:86:` line may begin with "-"; only "-" alone, or "-}", ends a message). Each message is
 * one statement: `:20:` and `:28C:` name it, `:25:` the account, `:60F:`/`:60M:` open and `:62F:`/`:62M:`
 * close it. Amounts use a decimal comma.
 *
 * Bounds and text (docs/bank.md, "Limits", "Text fields"): a line at most MAX_LINE characters, a field at most
 * MAX_FIELD_LINES lines, a `:86:` at most MAX_SUBFIELDS `?NN` subfields; every line without NUL, lone
 * surrogates or control characters (tabs kept); one `:25:` per message, before the opening balance; each text
 * kept through the policy of its field. The file is UTF-8 unless an encoding is given (`encoding`).
 */

/** SWIFT lines are 65 characters; exports that join a field's lines stay far below this. */
export const MAX_LINE = 4096;
/** `:86:` is 6 lines in SWIFT, 14 subfield lines in the DK format. */
export const MAX_FIELD_LINES = 100;
/** `?00` to `?63`, each at most once or twice. */
export const MAX_SUBFIELDS = 200;

/** A raw line of the file: tabs kept, other control characters refused (the fields check their own lengths). */
const LINE_TEXT: TextPolicy = { maxLength: MAX_LINE, tabs: true, empty: true };

/** German business transaction codes (GVC) of a returned payment: returned credit transfer, returned debits. */
const RETURN_GVC = new Set(['108', '109', '159']);

interface Field {
  readonly tag: string;
  readonly lines: string[];
  readonly line: number;
}

interface Message {
  ref: string | null;
  seq: string | null;
  head: StatementHead | null;
  account: string | null;
  opening: ParsedBalance | null;
  closing: ParsedBalance | null;
  entry: { field: Field; info: Field | null } | null;
  startLine: number;
  entries: number;
}

const ENVELOPE = /^\{1:[^}]*\}(?:\{2:[^}]*\})?(?:\{3:(?:\{[^}]*\})*\})?\{4:/;
const TERMINATOR = /^-\}?(?:\{5:.*)?\s*$|^-\}.*$/;
const BALANCE = /^([CD])(\d{6})([A-Z]{3})(\d+,\d*)$/;
const STATEMENT_LINE = /^(\d{6})(\d{4})?(RC|RD|C|D)([A-Z])?(\d+,\d*)([NSF][A-Z0-9]{3})(.*)$/;

export function parseMt940(input: Readable, file: string, encoding = 'utf-8'): BankFileParser {
  return { [Symbol.asyncIterator]: () => run(input, file, encoding)[Symbol.asyncIterator]() };
}

async function* run(input: Readable, file: string, encoding: string): AsyncGenerator<readonly BankFileItem[]> {
  const r = new Mt940Reader(file);
  try {
    for await (const line of linesOf(decodedText(input as AsyncIterable<Buffer>, encoding), MAX_LINE)) {
      r.lineNo++;
      r.readLine(line);
      if (r.out.length >= 1000) yield r.out.splice(0, r.out.length);
    }
  } catch (e) {
    if (e instanceof UndecodableBytes) r.fail(r.lineNo + 1, e.problem);
    if (e instanceof LineTooLong) r.fail(r.lineNo + 1, e.message);
    if (e instanceof UnknownEncoding) throw new BankFileError(file, 'encoding', e.message);
    throw e;
  }
  r.endMessage(r.lineNo);
  if (!r.sawField)
    throw new BankFileError(file, 'line 1', 'no MT940 field in the file (an MT940 starts with :20: or {1:)');
  if (r.out.length > 0) yield r.out;
}

/**
 * The state of one file being read: lines go in (readLine), fields are gathered until the next one starts,
 * then applied to the message they belong to; statements and entries come out in `out`.
 */
class Mt940Reader {
  readonly out: BankFileItem[] = [];
  lineNo = 0;
  sawField = false;
  private statements = 0;
  private msg: Message | null = null;
  private field: Field | null = null;

  constructor(private readonly file: string) {}

  fail(line: number, problem: string): never {
    throw new BankFileError(this.file, `line ${line}`, problem);
  }

  /** a text kept from field `tag` starting at `line`, through its policy */
  private kept(line: number, tag: string, what: string, policy: TextPolicy, t: string | null): string | null {
    if (t === null) return null;
    const r = checkText(t, policy);
    return r.ok ? r.value : this.fail(line, `:${tag}: ${what}: ${r.reason}`);
  }

  private dayOf(line: number, tag: string, t: string): string {
    const d = dayOfYymmdd(t);
    return d.ok ? d.value : this.fail(line, `:${tag}: ${d.reason}`);
  }

  endMessage(line: number): void {
    this.finishField();
    const msg = this.msg;
    if (msg === null) return;
    this.flushEntry(msg);
    if (msg.head === null) this.fail(line, 'a message without :20:, :25: and :60F: (an opening balance)');
    this.out.push({ kind: 'statement', statement: { ...msg.head!, opening: msg.opening, closing: msg.closing } });
    this.msg = null;
  }

  private finishField(): void {
    const f = this.field;
    this.field = null;
    if (f !== null) this.applyField(f);
  }

  private applyField(f: Field): void {
    if (f.tag === '20') {
      if (this.msg !== null && (this.msg.head !== null || this.msg.ref !== null)) this.endMessage(f.line);
      this.msg ??= this.newMessage(f.line);
    }
    if (this.msg === null) {
      if (f.tag === '86' || f.tag === '61' || f.tag.startsWith('6'))
        this.fail(f.line, `:${f.tag}: before a :20: field`);
      return;
    }
    const m: Message = this.msg;
    const value = f.lines[0]!.trim();
    switch (f.tag) {
      case '20':
        m.ref = this.kept(f.line, f.tag, 'reference', REFERENCE_TEXT, value || null);
        return;
      case '25':
        // the last one would otherwise win: a message is one statement of one account
        if (m.account !== null)
          this.fail(f.line, `a second :25: (account) in one message (the first names ${m.account})`);
        if (m.head !== null) this.fail(f.line, ':25: (account) after the opening balance :60F:');
        m.account = this.kept(
          f.line,
          f.tag,
          'account',
          REFERENCE_TEXT,
          value.replace(/\s+/g, '').toUpperCase() || null,
        );
        return;
      case '28C':
      case '28':
        m.seq = this.kept(f.line, f.tag, 'statement number', REFERENCE_TEXT, value || null);
        return;
      case '60F':
      case '60M': {
        if (m.head !== null) this.fail(f.line, `a second opening balance :${f.tag}: in one message`);
        m.opening = this.balance(f, value);
        const id = [m.ref, m.seq].filter((x) => x !== null).join('/');
        m.head = {
          index: this.statements++,
          statementId: id || null,
          account: m.account,
          currency: m.opening.currency,
          where: `line ${m.startLine}`,
        };
        return;
      }
      case '61':
        if (m.head === null) this.fail(f.line, ':61: before the opening balance :60F:');
        this.flushEntry(m);
        m.entry = { field: f, info: null };
        return;
      case '86':
        if (m.entry !== null && m.entry.info === null) m.entry.info = f;
        return;
      case '62F':
      case '62M':
        this.flushEntry(m);
        if (m.head === null) this.fail(f.line, `:${f.tag}: before the opening balance :60F:`);
        // the last would otherwise win, and the statement foot against it
        if (m.closing !== null) this.fail(f.line, `a second closing balance :${f.tag}: in one message`);
        m.closing = this.balance(f, value);
        return;
    }
  }

  private newMessage(line: number): Message {
    return {
      ref: null,
      seq: null,
      head: null,
      account: null,
      opening: null,
      closing: null,
      entry: null,
      startLine: line,
      entries: 0,
    };
  }

  private balance(f: Field, value: string): ParsedBalance {
    const b = BALANCE.exec(value);
    if (!b)
      this.fail(
        f.line,
        `:${f.tag}: expected C|D, YYMMDD, currency and amount (e.g. C250131EUR1234,56), got ${JSON.stringify(maskPans(value).slice(0, 40))}`,
      );
    const date = this.dayOf(f.line, f.tag, b![2]!);
    const amount = minorUnits(b![4]!, ',');
    if (typeof amount === 'string') this.fail(f.line, `:${f.tag}: ${amount}`);
    return {
      amount: b![1] === 'D' ? -(amount as bigint) : (amount as bigint),
      date,
      currency: b![3]!,
      where: `line ${f.line}`,
    };
  }

  private flushEntry(m: Message): void {
    const pending = m.entry;
    if (pending === null) return;
    m.entry = null;
    this.out.push({ kind: 'entry', head: m.head!, entry: this.statementLine(pending.field, pending.info, m) });
  }

  private statementLine(f: Field, info: Field | null, m: Message): ParsedEntry {
    const first = f.lines[0]!.trim();
    const s = STATEMENT_LINE.exec(first);
    if (!s)
      this.fail(
        f.line,
        `:61: expected value date, credit/debit mark, amount and type code, got ${JSON.stringify(maskPans(first).slice(0, 60))}`,
      );
    const valueDate = this.dayOf(f.line, '61', s![1]!);
    const bookingDate = s![2] ? bookingDay(valueDate, s![2]) : valueDate;
    if (bookingDate === null) this.fail(f.line, `:61: not a booking date: ${s![2]}`);
    const amount = minorUnits(s![5]!, ',');
    if (typeof amount === 'string') this.fail(f.line, `:61: ${amount}`);
    const mark = s![3]!;
    const [customerRef, bankRef] = splitRefs(s![7]!).map((r) =>
      this.kept(f.line, '61', 'reference', REFERENCE_TEXT, r),
    ) as [string | null, string | null];
    const details = info ? this.checkedInformation(info) : null;
    const supplementary = this.kept(f.line, '61', 'details', FREE_TEXT, f.lines.slice(1).join(' ').trim() || null);
    const isReturn = mark.startsWith('R') || (details?.gvc != null && RETURN_GVC.has(details.gvc));
    const stated = this.statedCharges(f, info, m.head!.currency);
    m.entries++;
    return {
      amount: amount as bigint,
      // SWIFT: RC is the reversal of a credit (a debit entry), RD the reversal of a debit (a credit entry)
      direction: mark === 'C' || mark === 'RD' ? 'credit' : 'debit',
      currency: m.head!.currency,
      status: 'booked',
      bookingDate,
      valueDate,
      bankRef,
      isReversal: isReturn,
      transactionCode: details?.gvc ?? s![6]!,
      info: details?.bookingText ?? supplementary,
      details: [
        {
          amount: stated?.transfer ?? null,
          direction: null,
          endToEndId: details?.endToEndId ?? customerRef,
          remittance: details?.remittance ?? null,
          counterpartyName: details?.counterpartyName ?? null,
          counterpartyAccount: details?.counterpartyAccount ?? null,
          isReturn,
          transactionCode: details?.gvc ?? null,
          bankRef: null,
          ...(stated ? { charges: stated.charges } : {}),
        },
      ],
      where: `line ${f.line}`,
    };
  }

  /**
   * The charges SWIFT's codes state for the line (`/CHGS/`, with `/OCMT/` the transfer's own amount; docs/bank.md,
   * "A charge folded into a transfer"): from the `:61:` supplementary details that begin with one, else from a
   * coded `:86:` (one that begins with a `/KEY/`); null when none is stated. The original amount counts as the transfer's only in
   * the statement's currency. A value that is not a currency and an amount refuses the file, naming the line.
   */
  private statedCharges(
    f: Field,
    info: Field | null,
    currency: string | null,
  ): { transfer: bigint | null; charges: ParsedCharge[] } | null {
    // codes only where SWIFT puts them: the details begin with one, the :86: is coded (`/KEY/value…`); free text
    // that happens to hold "/CHGS/" is remittance
    const details = f.lines.slice(1).join('').trim();
    const own = /^\/(OCMT|CHGS)\//.test(details) ? swiftAmountCodes(details) : { original: null, charges: [] };
    const infoText = info?.lines.join('').trim() ?? '';
    const fromLine = own.original !== null || own.charges.length > 0;
    if (!fromLine && !/^\/[A-Z]{2,4}\//.test(infoText)) return null;
    const codes = fromLine ? own : swiftAmountCodes(infoText);
    if (codes.charges.length === 0) return null;
    const [at, tag] = fromLine ? [f.line, '61'] : [info!.line, '86'];
    if (codes.charges.length > MAX_CHARGES) this.fail(at, `:${tag}: more than ${MAX_CHARGES} /CHGS/ codes`);
    const charges = codes.charges.map((c): ParsedCharge => {
      const v = this.codedAmount(at, tag, 'CHGS', c);
      return { amount: v.amount, currency: v.currency, direction: null, included: null };
    });
    const original = codes.original === null ? null : this.codedAmount(at, tag, 'OCMT', codes.original);
    return { transfer: original !== null && original.currency === currency ? original.amount : null, charges };
  }

  /** `EUR1,50`: a currency code and an amount with a decimal comma */
  private codedAmount(at: number, tag: string, code: string, value: string): { currency: string; amount: bigint } {
    const currency = checkCurrency(value.slice(0, 3));
    if (!currency.ok) this.fail(at, `:${tag}: /${code}/ ${currency.reason}`);
    const amount = minorUnits(value.slice(3), ',');
    if (typeof amount === 'string') this.fail(at, `:${tag}: /${code}/ ${amount}`);
    return { currency: value.slice(0, 3), amount: amount as bigint };
  }

  /** `:86:` read with its bounds; each text it gives through its policy */
  private checkedInformation(info: Field): ReturnType<typeof entryInformation> {
    const subfields = subfieldCount(info.lines);
    if (subfields > MAX_SUBFIELDS) this.fail(info.line, `:86: more than ${MAX_SUBFIELDS} subfields (${subfields})`);
    const d = entryInformation(info.lines);
    const at = info.line;
    return {
      ...d,
      gvc: d.gvc,
      bookingText: this.kept(at, '86', 'booking text', FREE_TEXT, d.bookingText),
      remittance: this.kept(at, '86', 'remittance', FREE_TEXT, d.remittance),
      endToEndId: this.kept(at, '86', 'end-to-end id', REFERENCE_TEXT, d.endToEndId),
      counterpartyName: this.kept(at, '86', 'counterparty name', NAME_TEXT, d.counterpartyName),
      counterpartyAccount: this.kept(at, '86', 'counterparty account', REFERENCE_TEXT, d.counterpartyAccount),
    };
  }

  readLine(raw: string): void {
    const checked = checkText(raw, LINE_TEXT);
    if (!checked.ok) this.fail(this.lineNo, checked.reason);
    let line = raw;
    for (;;) {
      const env = ENVELOPE.exec(line);
      if (env) {
        this.endMessage(this.lineNo);
        line = line.slice(env[0].length);
        if (line.trim() === '') break;
        continue;
      }
      if (TERMINATOR.test(line)) {
        this.endMessage(this.lineNo);
        const next = line.indexOf('{1:');
        if (next < 0) break;
        line = line.slice(next);
        continue;
      }
      const tag = /^:(\d{2}[A-Z]?):/.exec(line);
      if (tag) {
        this.finishField();
        this.sawField = true;
        this.field = { tag: tag[1]!, lines: [line.slice(tag[0].length)], line: this.lineNo };
      } else if (this.field !== null) {
        const f = this.field as Field;
        if (f.lines.length >= MAX_FIELD_LINES) this.fail(this.lineNo, `:${f.tag}: more than ${MAX_FIELD_LINES} lines`);
        f.lines.push(line);
      } else if (line.trim() !== '') {
        this.fail(this.lineNo, `expected a field (:20:, :25:, :61: …), got ${quoteForMessage(line)}`);
      }
      break;
    }
  }
}

/** The booking day (MMDD) of a :61: line, in the year that puts it nearest the value date. */
function bookingDay(valueDate: string, mmdd: string): string | null {
  const year = Number(valueDate.slice(0, 4));
  const valueMonth = Number(valueDate.slice(5, 7));
  const month = Number(mmdd.slice(0, 2));
  const y = valueMonth === 12 && month === 1 ? year + 1 : valueMonth === 1 && month === 12 ? year - 1 : year;
  return y >= 2000 && dayOfYymmdd(`${String(y % 100).padStart(2, '0')}${mmdd}`).ok
    ? `${y}-${mmdd.slice(0, 2)}-${mmdd.slice(2, 4)}`
    : null;
}

/** `customer ref[//bank ref]`; NONREF is no reference. */
function splitRefs(rest: string): [string | null, string | null] {
  const i = rest.indexOf('//');
  const customer = (i < 0 ? rest : rest.slice(0, i)).trim();
  const bank = i < 0 ? '' : rest.slice(i + 2).trim();
  return [customer === '' || customer === 'NONREF' ? null : customer, bank === '' ? null : bank];
}

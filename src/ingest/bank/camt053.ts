import type { Readable } from 'node:stream';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { checkCurrency, checkText, FREE_TEXT } from '../../input-rules';
import { minorUnits } from './amount';
import { FIELD_POLICY, MAX_DEPTH, MAX_DETAILS, MAX_TEXT, SUPPORTED_NAMESPACE } from './camt-rules';
import { chargeReading } from './camt053-charges';
import { dayOfCamt } from './dates';
import { decodedText, UndecodableBytes, UnknownEncoding } from './decode';
import {
  type Balance,
  childPath,
  codeOf,
  type Detail,
  type Entry,
  localName,
  newBalance,
  newDetail,
  newEntry,
  none,
  RETURN_SUB_FAMILIES,
  STATUS,
  xmlProblem,
} from './camt053-elements';
import {
  BankFileError,
  type BankFileItem,
  type BankFileParser,
  type Direction,
  type ParsedBalance,
  type ParsedDetail,
  type ParsedEntry,
  type StatementHead,
} from './types';

/**
 * camt.053 (ISO 20022 BankToCustomerStatement, .001.02 and later), read as a stream of SAX events: the file
 * is never held whole, only the entry being read. Element names are matched without their namespace prefix,
 * so every version of the message (and a Document inside a business envelope) reads alike; the namespace of
 * BkToCstmrStmt itself must be camt.053.001.02 to .13 (SUPPORTED_NAMESPACE). A DOCTYPE is refused: a bank
 * statement has none, and it is how entity-expansion and external-entity attacks come in.
 *
 * Bounds (docs/bank.md, "Limits"): nesting depth MAX_DEPTH, one text or comment MAX_TEXT characters, an entry's
 * transaction details MAX_DETAILS; a statement names its Id and Acct before its first Ntry (as the schema
 * orders them), so that every entry is booked to the account the statement names. Every text kept goes
 * through the shared text rule (src/input-rules.ts) with the policy of its field (camt-rules.ts).
 */

const PLAIN = /^[\x20-\x7e]*$/;

export function parseCamt053(input: Readable, file: string): BankFileParser {
  return { [Symbol.asyncIterator]: () => run(input, file)[Symbol.asyncIterator]() };
}

/** Wires saxes to the reader's steps, feeds it the decoded text and yields what the reader has finished. */
async function* run(input: Readable, file: string): AsyncGenerator<readonly BankFileItem[]> {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const r = new CamtReader(parser, file);
  const out = r.out;
  // only elements with attributes cost anything here (in a statement, Amt and its Ccy)
  parser.on('attribute', r.attribute);
  parser.on('doctype', () => r.fail('DOCTYPE', 'a DOCTYPE is not accepted in a bank statement (entities are refused)'));
  parser.on('opentag', r.open);
  parser.on('text', r.append);
  parser.on('cdata', r.append);
  parser.on('comment', r.comment);
  parser.on('closetag', r.close);
  // what saxes holds of a text, comment or CDATA, or of a name (element, attribute, entity reference,
  // processing instruction), not yet ended: bounded like the texts it hands over, or a file of one endless name
  // is held whole
  const pending = parser as unknown as { text: string; name: string; entity: string; piTarget: string };
  try {
    for await (const chunk of decodedText(input as AsyncIterable<Buffer>, 'xml')) {
      parser.write(chunk);
      if (pending.text.length > MAX_TEXT) r.tooLong();
      if (Math.max(pending.name.length, pending.entity.length, pending.piTarget.length) > MAX_TEXT) r.tooLong('a name');
      if (out.length > 0) yield out.splice(0, out.length);
    }
    parser.close();
  } catch (e) {
    if (e instanceof BankFileError) throw e;
    if (e instanceof UndecodableBytes) throw new BankFileError(file, `line ${parser.line}`, e.problem);
    if (e instanceof UnknownEncoding) throw new BankFileError(file, 'line 1 (XML declaration)', e.message);
    throw new BankFileError(file, `line ${parser.line}, column ${parser.column}`, xmlProblem(e));
  }
  if (!r.sawStatementDocument)
    throw new BankFileError(file, 'Document', 'no BkToCstmrStmt element: not a camt.053 file');
  if (out.length > 0) yield out;
}

/**
 * The state of one file being read: the element path, the text of the element open, the statement, balance,
 * entry and transaction detail being gathered, and the namespaces in scope. One step per saxes event (the
 * handlers are bound once, so no event allocates a closure), one per element group when it closes;
 * statements and entries come out in `out`.
 */
class CamtReader {
  readonly out: BankFileItem[] = [];
  sawStatementDocument = false;
  private readonly paths: string[] = [];
  private text = '';
  private stmtCount = 0;
  private head: StatementHead | null = null;
  private opening: ParsedBalance | null = null;
  private closing: ParsedBalance | null = null;
  private bal: Balance | null = null;
  private entry: Entry | null = null;
  private entryCount = 0;
  private detail: Detail | null = null;
  /** the `Chrgs` being read (of the entry, or of its detail open), and the entry's charges so far */
  private readonly charges = chargeReading({
    fail: (path, problem) => this.fail(path, problem),
    currencyOf: (path, c) => this.currencyOf(path, c),
    directionOf: (path, s) => this.directionOf(path, s),
  });
  private sawId = false;
  private sawAcct = false;
  /** namespace declarations in scope (only elements that declare one push here: most declare none) */
  private readonly scopes: { depth: number; prefix: string; uri: string }[] = [];
  private statementNs: { prefix: string; colon: string; uri: string } | null = null;
  /** depth of an open SplmtryData: what a bank puts there may be in any namespace */
  private supplementary = -1;
  /** the namespace declarations of the element being opened (saxes gives its attributes one by one first) */
  private declared: { prefix: string; uri: string }[] = [];

  constructor(
    private readonly parser: SaxesParser<{ xmlns: false; position: true }>,
    private readonly file: string,
  ) {}

  private where(path: string): string {
    const p = this.parser;
    const at = path.startsWith('Stmt') ? `Stmt[${this.head?.index ?? this.stmtCount}]${path.slice(4)}` : path;
    return `line ${p.line}, column ${p.column} (${at}${this.entry ? ` entry ${this.entry.index + 1}` : ''})`;
  }

  fail(path: string, problem: string): never {
    throw new BankFileError(this.file, this.where(path), problem);
  }

  private amountOf(path: string, s: string | null): bigint {
    if (s === null) return this.fail(path, 'missing Amt');
    const v = minorUnits(s, '.');
    return typeof v === 'string' ? this.fail(`${path}/Amt`, v) : v;
  }

  private directionOf(path: string, s: string | null): Direction {
    if (s === 'CRDT') return 'credit';
    if (s === 'DBIT') return 'debit';
    return this.fail(`${path}/CdtDbtInd`, `expected CRDT or DBIT, got ${JSON.stringify(s)}`);
  }

  private dayOf(path: string, t: string): string {
    const d = dayOfCamt(t, path.endsWith('DtTm') ? 'DtTm' : 'Dt');
    return d.ok ? d.value : this.fail(path, d.reason);
  }

  /** the text of an element kept (switch cases below), trimmed and through its field's policy */
  private checked(path: string, t: string): string {
    return this.kept(path, t.trim()) ?? '';
  }

  /** a text kept, through its field's policy */
  private kept(path: string, t: string | null): string | null {
    // an empty element is no value (as before): it is not a text to check
    if (t === null || t === '') return t;
    const policy = FIELD_POLICY[path];
    if (policy === undefined) return t;
    // most texts are plain printable ASCII, which no policy refuses: no per-character walk, no allocation
    if (t.length <= policy.maxLength && PLAIN.test(t)) return t;
    const r = checkText(t, policy);
    return r.ok ? r.value : this.fail(path, r.reason);
  }

  private currencyOf(path: string, c: string): string {
    const r = checkCurrency(c);
    return r.ok ? r.value : this.fail(`${path}/@Ccy`, r.reason);
  }

  // --- namespaces ---

  readonly attribute = (a: { name: string; value: string }): void => {
    if (a.name === 'xmlns') this.declared.push({ prefix: '', uri: a.value });
    else if (a.name.startsWith('xmlns:')) this.declared.push({ prefix: a.name.slice(6), uri: a.value });
  };

  private resolve(prefix: string): string | null {
    const scopes = this.scopes;
    for (let i = scopes.length - 1; i >= 0; i--) if (scopes[i]!.prefix === prefix) return scopes[i]!.uri;
    return null;
  }

  /** the namespace of BkToCstmrStmt, and of the elements inside it, is a camt.053 version recon reads */
  private checkNamespace(qname: string, path: string): void {
    if (this.declared.length > 0) this.declare(path);
    const ns = this.statementNs;
    if (ns === null) {
      if (localName(qname) === 'BkToCstmrStmt') this.statementNamespace(qname, path);
      return;
    }
    if (this.supplementary >= 0) return;
    if (ns.prefix === '' ? qname.indexOf(':') < 0 : qname.startsWith(ns.colon)) return;
    const i = qname.indexOf(':');
    if (this.resolve(i < 0 ? '' : qname.slice(0, i)) !== ns.uri)
      this.fail(path, `element ${JSON.stringify(qname.slice(0, 80))} is not in the statement's namespace`);
  }

  private declare(path: string): void {
    const depth = this.paths.length;
    const ns = this.statementNs;
    for (const d of this.declared) {
      if (ns && this.supplementary < 0 && d.prefix === ns.prefix && d.uri !== ns.uri)
        this.fail(path, `namespace ${JSON.stringify(d.uri.slice(0, 80))} declared inside the statement (${ns.uri})`);
      this.scopes.push({ depth, prefix: d.prefix, uri: d.uri });
    }
    this.declared = [];
  }

  private statementNamespace(qname: string, path: string): void {
    const i = qname.indexOf(':');
    const prefix = i < 0 ? '' : qname.slice(0, i);
    const uri = this.resolve(prefix);
    if (uri === null || !SUPPORTED_NAMESPACE.test(uri))
      this.fail(
        path,
        `namespace ${uri === null ? '(none)' : JSON.stringify(uri.slice(0, 80))} is not a camt.053 statement recon reads ` +
          '(urn:iso:std:iso:20022:tech:xsd:camt.053.001.02 to .13)',
      );
    this.statementNs = { prefix, colon: `${prefix}:`, uri: uri! };
  }

  // --- open tag ---

  readonly open = (tag: SaxesTagPlain): void => {
    const qname = tag.name;
    const colon = qname.indexOf(':');
    const name = colon < 0 ? qname : qname.slice(colon + 1);
    const paths = this.paths;
    const parent = paths[paths.length - 1];
    if (paths.length >= MAX_DEPTH)
      this.fail(parent!, `elements nested deeper than ${MAX_DEPTH} levels: not a bank statement`);
    const path = this.pathOf(name, parent);
    if (name === 'SplmtryData' && this.supplementary < 0) this.supplementary = paths.length;
    // the usual case (no declaration, the statement's own prefix) costs no call
    const ns = this.statementNs;
    if (
      this.declared.length > 0 ||
      ns === null ||
      (this.supplementary < 0 && (ns.prefix === '' ? colon >= 0 : !qname.startsWith(ns.colon)))
    )
      this.checkNamespace(qname, path);
    paths.push(path);
    this.text = '';
    if (this.charges.reading || name === 'Chrgs') this.charges.open(path, parent, tag, this.entry !== null);
    else if (path.startsWith('Stmt')) this.openStatementPart(path, name, tag);
  };

  /** the path of an element opened: a statement starts a path of its own (Stmt/...), and is begun here */
  private pathOf(name: string, parent: string | undefined): string {
    if (name === 'Stmt' && parent !== undefined && parent.endsWith('BkToCstmrStmt')) {
      const index = this.stmtCount++;
      this.head = { index, statementId: null, account: null, currency: null, where: `Stmt[${index}]` };
      this.opening = null;
      this.closing = null;
      this.entryCount = 0;
      this.sawId = false;
      this.sawAcct = false;
      return 'Stmt';
    }
    const path = parent === undefined ? name : childPath(parent, name);
    if (name === 'BkToCstmrStmt') this.sawStatementDocument = true;
    else if (name === 'BkToCstmrAcctRpt' || name === 'BkToCstmrDbtCdtNtfctn')
      this.fail(path, `this is not a camt.053 statement (${name}: camt.052/054 are not accepted)`);
    return path;
  }

  private openStatementPart(path: string, name: string, tag: SaxesTagPlain): void {
    switch (path) {
      case 'Stmt/Id':
      case 'Stmt/Acct':
        this.openIdOrAccount(path, name);
        break;
      case 'Stmt/Bal':
        this.bal = newBalance();
        break;
      case 'Stmt/Bal/Amt':
      case 'Stmt/Ntry/Amt':
      case 'Stmt/Ntry/NtryDtls/TxDtls/AmtDtls/TxAmt/Amt':
      case 'Stmt/Ntry/NtryDtls/TxDtls/Amt': {
        const ccy = tag.attributes['Ccy'];
        const c = typeof ccy === 'string' ? this.currencyOf(path, ccy) : null;
        if (this.bal && path === 'Stmt/Bal/Amt') this.bal.currency = c;
        else if (this.detail && path !== 'Stmt/Ntry/Amt') this.detail.amountCurrency = c;
        else if (this.entry) this.entry.currency = c;
        break;
      }
      case 'Stmt/Ntry':
        this.entry = newEntry(this.entryCount++);
        this.charges.newEntry();
        break;
      case 'Stmt/Ntry/NtryDtls/TxDtls':
        if (this.entry && this.entry.details.length >= MAX_DETAILS)
          this.fail(path, `more than ${MAX_DETAILS} transaction details in one entry`);
        this.detail = newDetail();
        break;
    }
  }

  private openIdOrAccount(path: string, name: string): void {
    // entries are booked to the account their statement names: it must be known before them
    if (this.entryCount > 0)
      this.fail(
        path,
        `${name} after the statement's entries: camt.053 gives the statement's Id and Acct before its first Ntry`,
      );
    if (name === 'Id' ? this.sawId : this.sawAcct) this.fail(path, `a second ${name} in one statement`);
    if (name === 'Id') this.sawId = true;
    else this.sawAcct = true;
  }

  // --- text, CDATA, comment ---

  readonly append = (t: string): void => {
    this.text += t;
    if (this.text.length > MAX_TEXT) this.tooLong();
  };

  readonly comment = (c: string): void => {
    if (c.length > MAX_TEXT) this.tooLong();
  };

  tooLong(what = 'a text, comment or CDATA'): never {
    return this.fail(this.paths[this.paths.length - 1] ?? 'Document', `${what} longer than ${MAX_TEXT} characters`);
  }

  // --- close tag ---

  readonly close = (): void => {
    const paths = this.paths;
    const path = paths.pop()!;
    const scopes = this.scopes;
    while (scopes.length > 0 && scopes[scopes.length - 1]!.depth >= paths.length) scopes.pop();
    if (this.supplementary >= paths.length) this.supplementary = -1;
    if (!path.startsWith('Stmt')) return;
    const t = this.text;
    this.text = '';
    if (this.head && this.closeStatementPart(path, t)) return;
    if (this.entry) this.closeEntryPart(path, t);
  };

  /** Statement, account and balances. True when the element was one of them. */
  private closeStatementPart(path: string, t: string): boolean {
    const h = this.head!;
    const bal = this.bal;
    switch (path) {
      case 'Stmt/Id':
        h.statementId = none(this.checked(path, t));
        return true;
      case 'Stmt/Acct/Id/IBAN':
      case 'Stmt/Acct/Id/Othr/Id':
        h.account = this.checked(path, t).replace(/\s+/g, '').toUpperCase() || null;
        return true;
      case 'Stmt/Acct/Ccy':
        h.currency = none(t) === null ? null : this.currencyOf(path, t.trim());
        return true;
      case 'Stmt/Bal/Tp/CdOrPrtry/Cd':
        if (bal) bal.type = t.trim();
        return true;
      case 'Stmt/Bal/Amt':
        if (bal) bal.amount = t;
        return true;
      case 'Stmt/Bal/CdtDbtInd':
        if (bal) bal.sign = t.trim();
        return true;
      case 'Stmt/Bal/Dt/Dt':
      case 'Stmt/Bal/Dt/DtTm':
        if (bal) bal.date = this.dayOf(path, t);
        return true;
      case 'Stmt/Bal':
        this.closeBalance(path);
        return true;
      case 'Stmt':
        this.out.push({ kind: 'statement', statement: { ...h, opening: this.opening, closing: this.closing } });
        this.head = null;
        return true;
    }
    return false;
  }

  private closeBalance(path: string): void {
    const b = this.bal!;
    this.bal = null;
    const isOpening = b.type === 'OPBD' || b.type === 'PRCD';
    if (!isOpening && b.type !== 'CLBD') return;
    const amount = this.amountOf(path, b.amount);
    const sign = this.directionOf(path, b.sign) === 'debit' ? -1n : 1n;
    if (b.date === null) this.fail(path, `balance ${b.type} without Dt`);
    const parsed: ParsedBalance = {
      amount: sign * amount,
      date: b.date!,
      currency: b.currency,
      where: this.where(path),
    };
    // an opening booked balance wins over the previous closing one when a bank gives both
    if (isOpening && (this.opening === null || b.type === 'OPBD')) this.opening = parsed;
    else if (b.type === 'CLBD') {
      // the last would otherwise win, and the statement foot against it
      if (this.closing !== null)
        this.fail(path, `a second closing balance (CLBD); the first is at ${this.closing.where}`);
      this.closing = parsed;
    }
  }

  private closeEntryPart(path: string, t: string): void {
    const e = this.entry!;
    const d = this.detail;
    if (this.charges.reading) {
      this.charges.close(path, t, d?.charges ?? e.charges);
      return;
    }
    switch (path) {
      case 'Stmt/Ntry/Amt':
        e.amount = t;
        return;
      case 'Stmt/Ntry/CdtDbtInd':
        e.sign = t.trim();
        return;
      case 'Stmt/Ntry/RvslInd':
        e.reversal = t.trim() === 'true' || t.trim() === '1';
        return;
      case 'Stmt/Ntry/Sts':
      case 'Stmt/Ntry/Sts/Cd':
        if (t.trim() !== '') e.status = t.trim();
        return;
      case 'Stmt/Ntry/BookgDt/Dt':
      case 'Stmt/Ntry/BookgDt/DtTm':
        e.bookingDate = this.dayOf(path, t);
        return;
      case 'Stmt/Ntry/ValDt/Dt':
      case 'Stmt/Ntry/ValDt/DtTm':
        e.valueDate = this.dayOf(path, t);
        return;
      case 'Stmt/Ntry/AcctSvcrRef':
        e.bankRef = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/BkTxCd/Domn/Cd':
        e.domain = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/BkTxCd/Domn/Fmly/Cd':
        e.family = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/BkTxCd/Domn/Fmly/SubFmlyCd':
        e.subFamily = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/BkTxCd/Prtry/Cd':
        e.proprietary = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/AddtlNtryInf':
        e.info = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry':
        this.out.push({ kind: 'entry', head: this.head!, entry: this.finishEntry(path, e) });
        this.entry = null;
        return;
    }
    if (d) this.closeDetailPart(path, t, d, e);
  }

  private closeDetailPart(path: string, t: string, d: Detail, e: Entry): void {
    switch (path) {
      case 'Stmt/Ntry/NtryDtls/TxDtls/Refs/EndToEndId':
        d.endToEndId = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/Refs/AcctSvcrRef':
        d.bankRef = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/AmtDtls/TxAmt/Amt':
      case 'Stmt/Ntry/NtryDtls/TxDtls/Amt':
        d.amount = t;
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/CdtDbtInd':
        d.sign = t.trim();
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RmtInf/Ustrd':
        if (none(this.checked(path, t))) d.ustrd.push(t.trim());
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RmtInf/Strd/CdtrRefInf/Ref':
        d.strdRef = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Dbtr/Nm':
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Dbtr/Pty/Nm':
        d.debtorName = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Cdtr/Nm':
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Cdtr/Pty/Nm':
        d.creditorName = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/DbtrAcct/Id/IBAN':
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/DbtrAcct/Id/Othr/Id':
        d.debtorAccount = none(this.checked(path, t).replace(/\s+/g, '').toUpperCase());
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/CdtrAcct/Id/IBAN':
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/CdtrAcct/Id/Othr/Id':
        d.creditorAccount = none(this.checked(path, t).replace(/\s+/g, '').toUpperCase());
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RtrInf':
        d.isReturn = true;
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Domn/Cd':
        d.domain = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Domn/Fmly/Cd':
        d.family = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Domn/Fmly/SubFmlyCd':
        d.subFamily = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Prtry/Cd':
        d.proprietary = none(this.checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls':
        e.details.push(d);
        this.detail = null;
        return;
    }
  }

  private finishEntry(path: string, e: Entry): ParsedEntry {
    const amount = this.amountOf(path, e.amount);
    const direction = this.directionOf(path, e.sign);
    const status =
      STATUS[e.status ?? ''] ??
      this.fail(`${path}/Sts`, `expected BOOK, PDNG or INFO, got ${JSON.stringify(e.status)}`);
    if (status === 'booked' && e.bookingDate === null)
      this.fail(`${path}/BookgDt`, 'a booked entry without a booking date');
    const code = codeOf(e);
    const details: ParsedDetail[] = e.details.map((d, i) =>
      this.finishDetail(`${path}/NtryDtls/TxDtls[${i}]`, d, direction),
    );
    // a transfer's TxAmt in another currency than the entry's is not the part of the entry it paid: beside stated
    // charges it is carried as not given, so that no charge is ever split from the entry by a sum across currencies
    const one = e.details.length === 1 ? e.details[0]! : null;
    const txCurrency = one?.amountCurrency ?? null;
    if (one && txCurrency !== null && txCurrency !== (e.currency ?? this.head?.currency ?? null))
      if (e.charges.length > 0 || one.charges.length > 0) details[0] = { ...details[0]!, amount: null };
    return {
      amount,
      direction,
      currency: e.currency,
      status,
      bookingDate: e.bookingDate,
      valueDate: e.valueDate,
      bankRef: e.bankRef,
      isReversal: e.reversal || (e.subFamily !== null && RETURN_SUB_FAMILIES.has(e.subFamily)),
      transactionCode: code,
      details,
      info: e.info,
      ...(e.charges.length > 0 ? { charges: e.charges } : {}),
      where: this.where(path),
    };
  }

  private finishDetail(dPath: string, d: Detail, direction: Direction): ParsedDetail {
    const dirOfDetail = d.sign === null ? null : this.directionOf(dPath, d.sign);
    const counterDebtor = (dirOfDetail ?? direction) === 'credit';
    const joined = [d.strdRef, ...d.ustrd].filter((x): x is string => x !== null).join(' ') || null;
    const remittance = joined === null ? null : checkText(joined, FREE_TEXT);
    if (remittance !== null && !remittance.ok) this.fail(`${dPath}/RmtInf`, remittance.reason);
    const dCode = codeOf(d);
    return {
      amount: d.amount === null ? null : this.amountOf(`${dPath}/Amt`, d.amount),
      direction: dirOfDetail,
      endToEndId: d.endToEndId,
      remittance: remittance === null ? null : joined,
      // the other side: the debtor of a credit, the creditor of a debit (a return may name only the original one)
      counterpartyName: counterDebtor ? (d.debtorName ?? d.creditorName) : (d.creditorName ?? d.debtorName),
      counterpartyAccount: counterDebtor
        ? (d.debtorAccount ?? d.creditorAccount)
        : (d.creditorAccount ?? d.debtorAccount),
      isReturn: d.isReturn || (d.subFamily !== null && RETURN_SUB_FAMILIES.has(d.subFamily)),
      transactionCode: dCode,
      bankRef: d.bankRef,
      ...(d.charges.length > 0 ? { charges: d.charges } : {}),
    };
  }
}

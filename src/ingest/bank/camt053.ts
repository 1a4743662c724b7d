import type { Readable } from 'node:stream';
import { SaxesParser } from 'saxes';
import { checkCurrency, checkText, FREE_TEXT } from '../../input-rules';
import { minorUnits } from './amount';
import { FIELD_POLICY, MAX_DEPTH, MAX_DETAILS, MAX_TEXT, SUPPORTED_NAMESPACE } from './camt-rules';
import { dayOfCamt } from './dates';
import { decodedText, UndecodableBytes, UnknownEncoding } from './decode';
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

interface Balance {
  type: string | null;
  amount: string | null;
  currency: string | null;
  sign: string | null;
  date: string | null;
}

interface Detail {
  amount: string | null;
  amountCurrency: string | null;
  sign: string | null;
  endToEndId: string | null;
  bankRef: string | null;
  ustrd: string[];
  strdRef: string | null;
  debtorName: string | null;
  debtorAccount: string | null;
  creditorName: string | null;
  creditorAccount: string | null;
  isReturn: boolean;
  domain: string | null;
  family: string | null;
  subFamily: string | null;
  proprietary: string | null;
}

interface Entry {
  amount: string | null;
  currency: string | null;
  sign: string | null;
  status: string | null;
  bookingDate: string | null;
  valueDate: string | null;
  bankRef: string | null;
  reversal: boolean;
  domain: string | null;
  family: string | null;
  subFamily: string | null;
  proprietary: string | null;
  info: string | null;
  details: Detail[];
  index: number;
}

const newDetail = (): Detail => ({
  amount: null,
  amountCurrency: null,
  sign: null,
  endToEndId: null,
  bankRef: null,
  ustrd: [],
  strdRef: null,
  debtorName: null,
  debtorAccount: null,
  creditorName: null,
  creditorAccount: null,
  isReturn: false,
  domain: null,
  family: null,
  subFamily: null,
  proprietary: null,
});

const localName = (name: string): string => {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
};

const none = (s: string): string | null => {
  const t = s.trim();
  return t === '' || t === 'NOTPROVIDED' ? null : t;
};

const STATUS: Record<string, ParsedEntry['status']> = { BOOK: 'booked', PDNG: 'pending', INFO: 'info' };

/** Bank transaction codes of a returned payment (ISO 20022 external code list, sub-family). */
const RETURN_SUB_FAMILIES = new Set(['RRTN', 'RPCR', 'UPCT']);

/**
 * The same path string object for every element at the same place: the switches below then compare by
 * identity first, and no path is built again per element.
 */
const CHILD_PATHS = new Map<string, Map<string, string>>();
function childPath(parent: string, name: string): string {
  let children = CHILD_PATHS.get(parent);
  if (!children) {
    children = new Map();
    if (CHILD_PATHS.size < 4096) CHILD_PATHS.set(parent, children);
  }
  let p = children.get(name);
  if (p === undefined) {
    // a property name is an internalized string: two internalized strings compare by identity alone
    p = Object.keys({ [`${parent}/${name}`]: 0 })[0]!;
    if (children.size < 256) children.set(name, p);
  }
  return p;
}

const PLAIN = /^[\x20-\x7e]*$/;

export function parseCamt053(input: Readable, file: string): BankFileParser {
  return { [Symbol.asyncIterator]: () => run(input, file)[Symbol.asyncIterator]() };
}

async function* run(input: Readable, file: string): AsyncGenerator<readonly BankFileItem[]> {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const out: BankFileItem[] = [];
  const paths: string[] = [];
  let text = '';
  let stmtCount = 0;
  let head: StatementHead | null = null;
  let opening: ParsedBalance | null = null;
  let closing: ParsedBalance | null = null;
  let sawStatementDocument = false;
  let bal: Balance | null = null;
  let entry: Entry | null = null;
  let entryCount = 0;
  let detail: Detail | null = null;
  let sawId = false;
  let sawAcct = false;
  // namespace declarations in scope (only elements that declare one push here: most declare none)
  const scopes: { depth: number; prefix: string; uri: string }[] = [];
  let statementNs: { prefix: string; colon: string; uri: string } | null = null;
  /** depth of an open SplmtryData: what a bank puts there may be in any namespace */
  let supplementary = -1;
  /** the namespace declarations of the element being opened (saxes gives its attributes one by one first) */
  let declared: { prefix: string; uri: string }[] = [];

  const where = (path: string) =>
    `line ${parser.line}, column ${parser.column} (${path.startsWith('Stmt') ? `Stmt[${head?.index ?? stmtCount}]${path.slice(4)}` : path}${entry ? ` entry ${entry.index + 1}` : ''})`;
  const fail = (path: string, problem: string): never => {
    throw new BankFileError(file, where(path), problem);
  };
  const amountOf = (path: string, s: string | null): bigint => {
    if (s === null) return fail(path, 'missing Amt');
    const v = minorUnits(s, '.');
    return typeof v === 'string' ? fail(`${path}/Amt`, v) : v;
  };
  const directionOf = (path: string, s: string | null): Direction => {
    if (s === 'CRDT') return 'credit';
    if (s === 'DBIT') return 'debit';
    return fail(`${path}/CdtDbtInd`, `expected CRDT or DBIT, got ${JSON.stringify(s)}`);
  };
  const dayOf = (path: string, t: string): string => {
    const d = dayOfCamt(t, path.endsWith('DtTm') ? 'DtTm' : 'Dt');
    return d.ok ? d.value : fail(path, d.reason);
  };
  /** the text of an element kept (switch cases below), trimmed and through its field's policy */
  const checked = (path: string, t: string): string => kept(path, t.trim()) ?? '';
  /** a text kept, through its field's policy */
  const kept = (path: string, t: string | null): string | null => {
    // an empty element is no value (as before): it is not a text to check
    if (t === null || t === '') return t;
    const policy = FIELD_POLICY[path];
    if (policy === undefined) return t;
    // most texts are plain printable ASCII, which no policy refuses: no per-character walk, no allocation
    if (t.length <= policy.maxLength && PLAIN.test(t)) return t;
    const r = checkText(t, policy);
    return r.ok ? r.value : fail(path, r.reason);
  };
  const currencyOf = (path: string, c: string): string => {
    const r = checkCurrency(c);
    return r.ok ? r.value : fail(`${path}/@Ccy`, r.reason);
  };
  const resolve = (prefix: string): string | null => {
    for (let i = scopes.length - 1; i >= 0; i--) if (scopes[i]!.prefix === prefix) return scopes[i]!.uri;
    return null;
  };
  /** the namespace of BkToCstmrStmt, and of the elements inside it, is a camt.053 version recon reads */
  const checkNamespace = (qname: string, path: string) => {
    if (declared.length > 0) declare(path);
    if (statementNs === null) {
      if (localName(qname) === 'BkToCstmrStmt') statementNamespace(qname, path);
      return;
    }
    if (supplementary >= 0) return;
    if (statementNs.prefix === '' ? qname.indexOf(':') < 0 : qname.startsWith(statementNs.colon)) return;
    const i = qname.indexOf(':');
    if (resolve(i < 0 ? '' : qname.slice(0, i)) !== statementNs.uri)
      fail(path, `element ${JSON.stringify(qname.slice(0, 80))} is not in the statement's namespace`);
  };
  const declare = (path: string) => {
    const depth = paths.length;
    for (const d of declared) {
      if (statementNs && supplementary < 0 && d.prefix === statementNs.prefix && d.uri !== statementNs.uri)
        fail(
          path,
          `namespace ${JSON.stringify(d.uri.slice(0, 80))} declared inside the statement (${statementNs.uri})`,
        );
      scopes.push({ depth, prefix: d.prefix, uri: d.uri });
    }
    declared = [];
  };
  const statementNamespace = (qname: string, path: string) => {
    const i = qname.indexOf(':');
    const prefix = i < 0 ? '' : qname.slice(0, i);
    const uri = resolve(prefix);
    if (uri === null || !SUPPORTED_NAMESPACE.test(uri))
      fail(
        path,
        `namespace ${uri === null ? '(none)' : JSON.stringify(uri.slice(0, 80))} is not a camt.053 statement recon reads ` +
          '(urn:iso:std:iso:20022:tech:xsd:camt.053.001.02 to .13)',
      );
    statementNs = { prefix, colon: `${prefix}:`, uri: uri! };
  };

  // only elements with attributes cost anything here (in a statement, Amt and its Ccy)
  parser.on('attribute', (a) => {
    if (a.name === 'xmlns') declared.push({ prefix: '', uri: a.value });
    else if (a.name.startsWith('xmlns:')) declared.push({ prefix: a.name.slice(6), uri: a.value });
  });
  parser.on('doctype', () => fail('DOCTYPE', 'a DOCTYPE is not accepted in a bank statement (entities are refused)'));
  parser.on('opentag', (tag) => {
    const qname = tag.name;
    const colon = qname.indexOf(':');
    const name = colon < 0 ? qname : qname.slice(colon + 1);
    const parent = paths[paths.length - 1];
    if (paths.length >= MAX_DEPTH)
      fail(parent!, `elements nested deeper than ${MAX_DEPTH} levels: not a bank statement`);
    let path: string;
    if (name === 'Stmt' && parent !== undefined && parent.endsWith('BkToCstmrStmt')) {
      path = 'Stmt';
      head = { index: stmtCount++, statementId: null, account: null, currency: null, where: `Stmt[${stmtCount - 1}]` };
      opening = null;
      closing = null;
      entryCount = 0;
      sawId = false;
      sawAcct = false;
    } else {
      path = parent === undefined ? name : childPath(parent, name);
      if (name === 'BkToCstmrStmt') sawStatementDocument = true;
      else if (name === 'BkToCstmrAcctRpt' || name === 'BkToCstmrDbtCdtNtfctn')
        fail(path, `this is not a camt.053 statement (${name}: camt.052/054 are not accepted)`);
    }
    if (name === 'SplmtryData' && supplementary < 0) supplementary = paths.length;
    // the usual case (no declaration, the statement's own prefix) costs no call
    if (
      declared.length > 0 ||
      statementNs === null ||
      (supplementary < 0 && (statementNs.prefix === '' ? colon >= 0 : !qname.startsWith(statementNs.colon)))
    )
      checkNamespace(qname, path);
    paths.push(path);
    text = '';
    if (!path.startsWith('Stmt')) return;
    switch (path) {
      case 'Stmt/Id':
      case 'Stmt/Acct':
        // entries are booked to the account their statement names: it must be known before them
        if (entryCount > 0)
          fail(
            path,
            `${name} after the statement's entries: camt.053 gives the statement's Id and Acct before its first Ntry`,
          );
        if (name === 'Id' ? sawId : sawAcct) fail(path, `a second ${name} in one statement`);
        if (name === 'Id') sawId = true;
        else sawAcct = true;
        break;
      case 'Stmt/Bal':
        bal = { type: null, amount: null, currency: null, sign: null, date: null };
        break;
      case 'Stmt/Bal/Amt':
      case 'Stmt/Ntry/Amt':
      case 'Stmt/Ntry/NtryDtls/TxDtls/AmtDtls/TxAmt/Amt':
      case 'Stmt/Ntry/NtryDtls/TxDtls/Amt': {
        const ccy = tag.attributes['Ccy'];
        const c = typeof ccy === 'string' ? currencyOf(path, ccy) : null;
        if (bal && path === 'Stmt/Bal/Amt') bal.currency = c;
        else if (detail && path !== 'Stmt/Ntry/Amt') detail.amountCurrency = c;
        else if (entry) entry.currency = c;
        break;
      }
      case 'Stmt/Ntry':
        entry = {
          amount: null,
          currency: null,
          sign: null,
          status: null,
          bookingDate: null,
          valueDate: null,
          bankRef: null,
          reversal: false,
          domain: null,
          family: null,
          subFamily: null,
          proprietary: null,
          info: null,
          details: [],
          index: entryCount++,
        };
        break;
      case 'Stmt/Ntry/NtryDtls/TxDtls':
        if (entry && entry.details.length >= MAX_DETAILS)
          fail(path, `more than ${MAX_DETAILS} transaction details in one entry`);
        detail = newDetail();
        break;
    }
  });
  const append = (t: string) => {
    text += t;
    if (text.length > MAX_TEXT) tooLong();
  };
  const tooLong = () =>
    fail(paths[paths.length - 1] ?? 'Document', `a text, comment or CDATA longer than ${MAX_TEXT} characters`);
  parser.on('text', append);
  parser.on('cdata', append);
  parser.on('comment', (c) => {
    if (c.length > MAX_TEXT) tooLong();
  });
  parser.on('closetag', () => {
    const path = paths.pop()!;
    while (scopes.length > 0 && scopes[scopes.length - 1]!.depth >= paths.length) scopes.pop();
    if (supplementary >= paths.length) supplementary = -1;
    if (!path.startsWith('Stmt')) return;
    const t = text;
    text = '';
    if (head && closeStatementPart(path, t)) return;
    if (entry) closeEntryPart(path, t);
  });

  /** Statement, account and balances. True when the element was one of them. */
  function closeStatementPart(path: string, t: string): boolean {
    const h = head!;
    switch (path) {
      case 'Stmt/Id':
        h.statementId = none(checked(path, t));
        return true;
      case 'Stmt/Acct/Id/IBAN':
      case 'Stmt/Acct/Id/Othr/Id':
        h.account = checked(path, t).replace(/\s+/g, '').toUpperCase() || null;
        return true;
      case 'Stmt/Acct/Ccy':
        h.currency = none(t) === null ? null : currencyOf(path, t.trim());
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
        if (bal) bal.date = dayOf(path, t);
        return true;
      case 'Stmt/Bal': {
        const b = bal!;
        bal = null;
        const isOpening = b.type === 'OPBD' || b.type === 'PRCD';
        if (!isOpening && b.type !== 'CLBD') return true;
        const amount = amountOf(path, b.amount);
        const sign = directionOf(path, b.sign) === 'debit' ? -1n : 1n;
        if (b.date === null) fail(path, `balance ${b.type} without Dt`);
        const parsed: ParsedBalance = {
          amount: sign * amount,
          date: b.date!,
          currency: b.currency,
          where: where(path),
        };
        // an opening booked balance wins over the previous closing one when a bank gives both
        if (isOpening && (opening === null || b.type === 'OPBD')) opening = parsed;
        else if (b.type === 'CLBD') closing = parsed;
        return true;
      }
      case 'Stmt':
        out.push({ kind: 'statement', statement: { ...h, opening, closing } });
        head = null;
        return true;
    }
    return false;
  }

  function closeEntryPart(path: string, t: string): void {
    const e = entry!;
    const d = detail;
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
        e.bookingDate = dayOf(path, t);
        return;
      case 'Stmt/Ntry/ValDt/Dt':
      case 'Stmt/Ntry/ValDt/DtTm':
        e.valueDate = dayOf(path, t);
        return;
      case 'Stmt/Ntry/AcctSvcrRef':
        e.bankRef = none(checked(path, t));
        return;
      case 'Stmt/Ntry/BkTxCd/Domn/Cd':
        e.domain = none(checked(path, t));
        return;
      case 'Stmt/Ntry/BkTxCd/Domn/Fmly/Cd':
        e.family = none(checked(path, t));
        return;
      case 'Stmt/Ntry/BkTxCd/Domn/Fmly/SubFmlyCd':
        e.subFamily = none(checked(path, t));
        return;
      case 'Stmt/Ntry/BkTxCd/Prtry/Cd':
        e.proprietary = none(checked(path, t));
        return;
      case 'Stmt/Ntry/AddtlNtryInf':
        e.info = none(checked(path, t));
        return;
      case 'Stmt/Ntry':
        out.push({ kind: 'entry', head: head!, entry: finishEntry(path, e) });
        entry = null;
        return;
    }
    if (d) closeDetailPart(path, t, d, e);
  }

  function closeDetailPart(path: string, t: string, d: Detail, e: Entry): void {
    switch (path) {
      case 'Stmt/Ntry/NtryDtls/TxDtls/Refs/EndToEndId':
        d.endToEndId = none(checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/Refs/AcctSvcrRef':
        d.bankRef = none(checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/AmtDtls/TxAmt/Amt':
      case 'Stmt/Ntry/NtryDtls/TxDtls/Amt':
        d.amount = t;
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/CdtDbtInd':
        d.sign = t.trim();
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RmtInf/Ustrd':
        if (none(checked(path, t))) d.ustrd.push(t.trim());
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RmtInf/Strd/CdtrRefInf/Ref':
        d.strdRef = none(checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Dbtr/Nm':
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Dbtr/Pty/Nm':
        d.debtorName = none(checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Cdtr/Nm':
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Cdtr/Pty/Nm':
        d.creditorName = none(checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/DbtrAcct/Id/IBAN':
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/DbtrAcct/Id/Othr/Id':
        d.debtorAccount = none(checked(path, t).replace(/\s+/g, '').toUpperCase());
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/CdtrAcct/Id/IBAN':
      case 'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/CdtrAcct/Id/Othr/Id':
        d.creditorAccount = none(checked(path, t).replace(/\s+/g, '').toUpperCase());
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/RtrInf':
        d.isReturn = true;
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Domn/Cd':
        d.domain = none(checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Domn/Fmly/Cd':
        d.family = none(checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Domn/Fmly/SubFmlyCd':
        d.subFamily = none(checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Prtry/Cd':
        d.proprietary = none(checked(path, t));
        return;
      case 'Stmt/Ntry/NtryDtls/TxDtls':
        e.details.push(d);
        detail = null;
        return;
    }
  }

  function finishEntry(path: string, e: Entry): ParsedEntry {
    const amount = amountOf(path, e.amount);
    const direction = directionOf(path, e.sign);
    const status =
      STATUS[e.status ?? ''] ?? fail(`${path}/Sts`, `expected BOOK, PDNG or INFO, got ${JSON.stringify(e.status)}`);
    if (status === 'booked' && e.bookingDate === null) fail(`${path}/BookgDt`, 'a booked entry without a booking date');
    const code = codeOf(e);
    const details: ParsedDetail[] = e.details.map((d, i) => {
      const dPath = `${path}/NtryDtls/TxDtls[${i}]`;
      const dirOfDetail = d.sign === null ? null : directionOf(dPath, d.sign);
      const counterDebtor = (dirOfDetail ?? direction) === 'credit';
      const joined = [d.strdRef, ...d.ustrd].filter((x): x is string => x !== null).join(' ') || null;
      const remittance = joined === null ? null : checkText(joined, FREE_TEXT);
      if (remittance !== null && !remittance.ok) fail(`${dPath}/RmtInf`, remittance.reason);
      const dCode = codeOf(d);
      return {
        amount: d.amount === null ? null : amountOf(`${dPath}/Amt`, d.amount),
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
      };
    });
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
      where: where(path),
    };
  }

  // what saxes holds of a text, comment or CDATA not yet ended: bounded like the texts it hands over
  const pending = parser as unknown as { text: string };
  try {
    for await (const chunk of decodedText(input as AsyncIterable<Buffer>, 'xml')) {
      parser.write(chunk);
      if (pending.text.length > MAX_TEXT) tooLong();
      if (out.length > 0) yield out.splice(0, out.length);
    }
    parser.close();
  } catch (e) {
    if (e instanceof BankFileError) throw e;
    if (e instanceof UndecodableBytes) throw new BankFileError(file, `line ${parser.line}`, e.problem);
    if (e instanceof UnknownEncoding) throw new BankFileError(file, 'line 1 (XML declaration)', e.message);
    throw new BankFileError(file, `line ${parser.line}, column ${parser.column}`, xmlProblem(e));
  }
  if (!sawStatementDocument) throw new BankFileError(file, 'Document', 'no BkToCstmrStmt element: not a camt.053 file');
  if (out.length > 0) yield out;
}

function codeOf(x: {
  domain: string | null;
  family: string | null;
  subFamily: string | null;
  proprietary: string | null;
}): string | null {
  if (x.domain !== null) return [x.domain, x.family, x.subFamily].filter((p) => p !== null).join('/');
  return x.proprietary;
}

/** saxes prefixes its messages with its own position: the position is given separately. */
function xmlProblem(e: unknown): string {
  const m = (e as Error)?.message ?? String(e);
  return `not well-formed XML: ${m.replace(/^(?:[^:]*:)?\d+:\d+: /, '')}`;
}

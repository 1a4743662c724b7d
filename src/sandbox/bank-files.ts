import { formatMinor } from '../ingest/bank/amount';

/**
 * Writers of bank statement files for the sandbox's bank and the tests: camt.053 (.001.08) and MT940, from
 * one plain description of a statement. Amounts are minor units (two decimals). The closing balance is
 * opening + booked entries unless `closingOverride` says otherwise (to write a statement that does not foot).
 */

export interface BankFileDetail {
  /** minor units, positive; needed when the entry has several details (a batch) */
  readonly amount?: bigint;
  readonly endToEndId?: string;
  /** unstructured remittance text (camt Ustrd, MT940 ?20–?29 / SVWZ+) */
  readonly remittance?: string;
  /** structured creditor reference (camt Strd/CdtrRefInf/Ref) */
  readonly creditorRef?: string;
  readonly counterpartyName?: string;
  readonly counterpartyAccount?: string;
  /** a returned payment (camt RtrInf; MT940 GVC 159) */
  readonly isReturn?: boolean;
  /**
   * camt only: charges the bank states for the transfer (`TxDtls/Chrgs/Rcrd`), with `amount` then written as the
   * transfer's own amount (`AmtDtls/TxAmt`); the entry's amount is the caller's (TxAmt + the charges, to fold them)
   */
  readonly charges?: readonly BankFileCharge[];
}

export interface BankFileCharge {
  /** minor units, positive */
  readonly amount: bigint;
  /** the entry's currency unless given */
  readonly currency?: string;
  /** `ChrgInclInd`, left out unless given */
  readonly included?: boolean;
}

export interface BankFileEntry {
  readonly direction: 'credit' | 'debit';
  /** minor units, positive */
  readonly amount: bigint;
  readonly bookingDate: string;
  readonly valueDate?: string;
  /** the bank's reference (camt AcctSvcrRef, MT940 bank reference after //) */
  readonly bankRef?: string;
  /** pending entries are written with status PDNG (camt only; MT940 has booked entries only) */
  readonly pending?: boolean;
  /** camt domain/family/sub-family, e.g. PMNT/RCDT/ESCT */
  readonly transactionCode?: string;
  /** none: an entry without details; one: a single payment; several: a batch */
  readonly details?: readonly BankFileDetail[];
}

export interface BankFileStatement {
  /** IBAN or account number */
  readonly accountId: string;
  readonly currency: string;
  readonly statementId: string;
  /** the statement's sequence number (camt ElctrncSeqNb, MT940 :28C:) */
  readonly sequence?: number;
  readonly openingDate: string;
  readonly closingDate: string;
  /** signed minor units */
  readonly openingBalance: bigint;
  readonly closingOverride?: bigint;
  readonly entries: readonly BankFileEntry[];
}

export function closingBalance(s: BankFileStatement): bigint {
  if (s.closingOverride !== undefined) return s.closingOverride;
  let b = s.openingBalance;
  for (const e of s.entries) if (!e.pending) b += e.direction === 'credit' ? e.amount : -e.amount;
  return b;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const dec = (v: bigint) => formatMinor(v < 0n ? -v : v);
const sign = (v: bigint) => (v < 0n ? 'DBIT' : 'CRDT');

function camtBalance(type: string, amount: bigint, ccy: string, date: string): string {
  return `<Bal><Tp><CdOrPrtry><Cd>${type}</Cd></CdOrPrtry></Tp><Amt Ccy="${ccy}">${dec(amount)}</Amt><CdtDbtInd>${sign(amount)}</CdtDbtInd><Dt><Dt>${date}</Dt></Dt></Bal>\n`;
}

function camtAccount(a: string): string {
  return /^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(a) ? `<IBAN>${esc(a)}</IBAN>` : `<Othr><Id>${esc(a)}</Id></Othr>`;
}

function camtDetail(d: BankFileDetail, e: BankFileEntry, ccy: string, batch: boolean): string {
  const party = e.direction === 'credit' ? 'Dbtr' : 'Cdtr';
  return (
    '<TxDtls>' +
    `<Refs><EndToEndId>${esc(d.endToEndId ?? 'NOTPROVIDED')}</EndToEndId></Refs>` +
    (batch && d.amount !== undefined
      ? `<Amt Ccy="${ccy}">${dec(d.amount)}</Amt><CdtDbtInd>${e.direction === 'credit' ? 'CRDT' : 'DBIT'}</CdtDbtInd>`
      : '') +
    (d.charges?.length ? camtCharges(d, ccy) : '') +
    (d.counterpartyName || d.counterpartyAccount
      ? `<RltdPties>${d.counterpartyName ? `<${party}><Pty><Nm>${esc(d.counterpartyName)}</Nm></Pty></${party}>` : ''}${d.counterpartyAccount ? `<${party}Acct><Id>${camtAccount(d.counterpartyAccount)}</Id></${party}Acct>` : ''}</RltdPties>`
      : '') +
    (d.remittance || d.creditorRef
      ? `<RmtInf>${d.remittance ? `<Ustrd>${esc(d.remittance)}</Ustrd>` : ''}${d.creditorRef ? `<Strd><CdtrRefInf><Ref>${esc(d.creditorRef)}</Ref></CdtrRefInf></Strd>` : ''}</RmtInf>`
      : '') +
    (d.isReturn ? '<RtrInf><Rsn><Cd>AC04</Cd></Rsn></RtrInf>' : '') +
    '</TxDtls>'
  );
}

/** A detail's `AmtDtls/TxAmt` and `Chrgs` (.001.08: after `Amt`, before `RltdPties`). */
function camtCharges(d: BankFileDetail, ccy: string): string {
  const charges = d.charges ?? [];
  const total = charges.reduce((t, c) => t + c.amount, 0n);
  return (
    (d.amount === undefined ? '' : `<AmtDtls><TxAmt><Amt Ccy="${ccy}">${dec(d.amount)}</Amt></TxAmt></AmtDtls>`) +
    `<Chrgs><TtlChrgsAndTaxAmt Ccy="${ccy}">${dec(total)}</TtlChrgsAndTaxAmt>` +
    charges
      .map(
        (c) =>
          `<Rcrd><Amt Ccy="${c.currency ?? ccy}">${dec(c.amount)}</Amt><CdtDbtInd>DBIT</CdtDbtInd>` +
          `${c.included === undefined ? '' : `<ChrgInclInd>${c.included}</ChrgInclInd>`}` +
          '<Tp><Cd>COMT</Cd></Tp></Rcrd>',
      )
      .join('') +
    '</Chrgs>'
  );
}

/** One `<Ntry>`: exported for the streaming writer of the bench. */
export function camtEntry(e: BankFileEntry, ccy: string): string {
  const [domain, family, sub] = (
    e.transactionCode ?? (e.direction === 'credit' ? 'PMNT/RCDT/ESCT' : 'PMNT/ICDT/ESCT')
  ).split('/');
  const details = e.details ?? [];
  return (
    `<Ntry><Amt Ccy="${ccy}">${dec(e.amount)}</Amt><CdtDbtInd>${e.direction === 'credit' ? 'CRDT' : 'DBIT'}</CdtDbtInd>` +
    `<Sts><Cd>${e.pending ? 'PDNG' : 'BOOK'}</Cd></Sts><BookgDt><Dt>${e.bookingDate}</Dt></BookgDt>` +
    `<ValDt><Dt>${e.valueDate ?? e.bookingDate}</Dt></ValDt>` +
    (e.bankRef ? `<AcctSvcrRef>${esc(e.bankRef)}</AcctSvcrRef>` : '') +
    `<BkTxCd><Domn><Cd>${domain}</Cd><Fmly><Cd>${family}</Cd><SubFmlyCd>${sub}</SubFmlyCd></Fmly></Domn></BkTxCd>` +
    (details.length > 0
      ? `<NtryDtls>${details.length > 1 ? `<Btch><NbOfTxs>${details.length}</NbOfTxs></Btch>` : ''}${details.map((d) => camtDetail(d, e, ccy, details.length > 1)).join('')}</NtryDtls>`
      : '') +
    '</Ntry>\n'
  );
}

/** The parts of a camt.053 document around its entries: [before the first entry, after the last]. */
export function camtFrame(s: BankFileStatement, messageId = s.statementId): [string, string] {
  const closing = closingBalance(s);
  const head =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">\n<BkToCstmrStmt>\n' +
    `<GrpHdr><MsgId>${esc(messageId)}</MsgId><CreDtTm>${s.closingDate}T23:59:59</CreDtTm></GrpHdr>\n` +
    `<Stmt><Id>${esc(s.statementId)}</Id><ElctrncSeqNb>${s.sequence ?? 1}</ElctrncSeqNb>` +
    `<FrToDt><FrDtTm>${s.openingDate}T00:00:00</FrDtTm><ToDtTm>${s.closingDate}T23:59:59</ToDtTm></FrToDt>\n` +
    `<Acct><Id>${camtAccount(s.accountId)}</Id><Ccy>${s.currency}</Ccy></Acct>\n` +
    camtBalance('OPBD', s.openingBalance, s.currency, s.openingDate) +
    camtBalance('CLBD', closing, s.currency, s.closingDate);
  return [head, '</Stmt>\n</BkToCstmrStmt>\n</Document>\n'];
}

export function renderCamt053(statement: BankFileStatement): string {
  const [head, tail] = camtFrame(statement);
  return head + statement.entries.map((e) => camtEntry(e, statement.currency)).join('') + tail;
}

/**
 * A camt.053 of `count` entries written piece by piece to a stream (the bench's million-entry file):
 * `entryAt(i)` gives each entry, never all at once.
 */
export async function writeCamt053Stream(
  out: NodeJS.WritableStream,
  frame: Omit<BankFileStatement, 'entries' | 'closingOverride'>,
  count: number,
  entryAt: (i: number) => BankFileEntry,
): Promise<void> {
  let closing = frame.openingBalance;
  for (let i = 0; i < count; i++) {
    const e = entryAt(i);
    if (!e.pending) closing += e.direction === 'credit' ? e.amount : -e.amount;
  }
  const [head, tail] = camtFrame({ ...frame, entries: [], closingOverride: closing });
  const write = (s: string) =>
    out.write(s) ? Promise.resolve() : new Promise<void>((resolve) => out.once('drain', () => resolve()));
  await write(head);
  let buf = '';
  for (let i = 0; i < count; i++) {
    buf += camtEntry(entryAt(i), frame.currency);
    if (buf.length > 65536) {
      await write(buf);
      buf = '';
    }
  }
  await write(buf + tail);
}

const yymmdd = (d: string) => d.slice(2, 4) + d.slice(5, 7) + d.slice(8, 10);

/** DK-structured :86: subfields, each cut at 27 characters as German banks do. */
function mt940Details(e: BankFileEntry, d: BankFileDetail | undefined): string {
  // a German business transaction code given as the entry's code (e.g. 805, charges) is written as it is
  const given = /^\d{3}$/.test(e.transactionCode ?? '') ? e.transactionCode! : null;
  const gvc = given ?? (d?.isReturn ? '159' : e.direction === 'credit' ? '166' : '177');
  const text = [d?.endToEndId ? `EREF+${d.endToEndId}` : '', d?.remittance ? `SVWZ+${d.remittance}` : '']
    .filter(Boolean)
    .join('');
  const cut = (s: string) => s.match(/.{1,27}/g) ?? [];
  let out = `${gvc}?00${given ? 'ENTGELTE' : e.direction === 'credit' ? 'GUTSCHRIFT' : 'UEBERWEISUNG'}`;
  cut(text)
    .slice(0, 10)
    .forEach((p, i) => {
      out += `?2${i}${p}`;
    });
  if (d?.counterpartyAccount) out += `?31${d.counterpartyAccount}`;
  cut(d?.counterpartyName ?? '')
    .slice(0, 2)
    .forEach((p, i) => {
      out += `?3${2 + i}${p}`;
    });
  // fields of at most 65 characters per line
  return (out.match(/.{1,65}/g) ?? []).join('\r\n');
}

/**
 * MT940 of one statement, optionally inside the SWIFT block envelope. A batch is written as one :61: per
 * detail (MT940 has no batch details); pending entries are left out (MT940 reports booked entries).
 */
export function renderMt940(statement: BankFileStatement, opts: { envelope?: boolean } = {}): string {
  const s = statement;
  const bal = (tag: string, v: bigint, d: string) =>
    `:${tag}:${v < 0n ? 'D' : 'C'}${yymmdd(d)}${s.currency}${dec(v).replace('.', ',')}`;
  const lines: string[] = [];
  if (opts.envelope) lines.push('{1:F01RECONSBXAXXX0000000000}{2:I940RECONSBXXXXXN}{4:');
  lines.push(
    `:20:${s.statementId.slice(0, 16)}`,
    `:25:${s.accountId}`,
    `:28C:${String(s.sequence ?? 1).padStart(5, '0')}/001`,
  );
  lines.push(bal('60F', s.openingBalance, s.openingDate));
  for (const e of s.entries) {
    if (e.pending) continue;
    const parts = (e.details ?? []).length > 1 ? e.details! : [e.details?.[0]];
    parts.forEach((d, i) => {
      const amount = parts.length > 1 ? d!.amount! : e.amount;
      const ref = e.bankRef ? `//${(parts.length > 1 ? `${e.bankRef}-${i}` : e.bankRef).slice(0, 16)}` : '';
      const mark = e.direction === 'credit' ? 'C' : 'D';
      lines.push(
        `:61:${yymmdd(e.valueDate ?? e.bookingDate)}${e.bookingDate.slice(5, 7)}${e.bookingDate.slice(8, 10)}${mark}${dec(amount).replace('.', ',')}${/^\d{3}$/.test(e.transactionCode ?? '') ? 'NCHG' : 'NTRF'}${(d?.endToEndId ?? 'NONREF').slice(0, 16)}${ref}`,
      );
      lines.push(`:86:${mt940Details(e, d)}`);
    });
  }
  lines.push(bal('62F', closingBalance(s), s.closingDate));
  lines.push(opts.envelope ? '-}' : '-');
  return lines.join('\r\n') + '\r\n';
}

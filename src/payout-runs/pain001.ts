import { sha256Hex } from '../canonical';
import { currencyDecimals } from '../money';
import { PayoutRunRefused } from './errors';

/**
 * The payment file of an approved payout run: an ISO 20022 customer credit transfer initiation,
 * `pain.001.001.09` (CustomerCreditTransferInitiationV09), which finance uploads to its bank. Pure: the same
 * run gives the same bytes (the creation time is the approval's), so the sha-256 recorded when it was sent
 * identifies the file downloaded again later.
 *
 * One payment information block per currency (its debtor: the payouts account of that currency), one credit
 * transfer per line (sub-merchant, currency, statement reference); the reference is both the end-to-end id and
 * the unstructured remittance, which is how the payouts leg finds the debit again (docs/bank.md). Nothing in
 * the file is recon's own vocabulary: names, accounts, amounts, the statement number.
 */

export const PAIN_001_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:pain.001.001.09';

export interface PaymentLine {
  readonly currency: string;
  /** minor units: hundredths of the currency unit, as recon keeps every amount (docs/architecture.md, "Amounts") */
  readonly amount: bigint;
  readonly reference: string;
  readonly creditorName: string;
  readonly creditorAccount: string;
  /** the creditor's bank (BIC), when known: written as CdtrAgt */
  readonly creditorAgent?: string;
}

export interface Debtor {
  readonly currency: string;
  readonly account: string;
  readonly name: string;
  readonly bic: string | null;
}

export interface PaymentOrder {
  /** the message id: the run's id (at most 35 characters) */
  readonly messageId: string;
  /** ISO instant the file is created at (the approval) */
  readonly createdAt: string;
  /** YYYY-MM-DD */
  readonly executionDate: string;
  readonly debtors: readonly Debtor[];
  readonly lines: readonly PaymentLine[];
  /**
   * BtchBookg false: one debit per transfer, each with its end-to-end id, which is how the payouts leg finds it;
   * left to the bank, most book a block as one debit of its control sum, which names no statement. False only
   * for runs drafted before it was written, whose file keeps its bytes.
   */
  readonly individualBooking?: boolean;
}

/**
 * Minor units (hundredths) as the currency's own decimal text, exactly ("1234.5" never appears: 12345n EUR →
 * "123.45", 12300n JPY → "123", 12345n KWD → "123.450"); null when the amount is not a whole number of the
 * currency's smallest unit (12345n JPY), which no bank can transfer.
 */
export function decimalText(minor: bigint, currency: string): string | null {
  if (minor < 0n) return null;
  const exp = currencyDecimals(currency);
  let units = minor;
  if (exp < 2) {
    const scale = 10n ** BigInt(2 - exp);
    if (minor % scale !== 0n) return null;
    units = minor / scale;
  } else units = minor * 10n ** BigInt(exp - 2);
  const digits = units.toString().padStart(exp + 1, '0');
  return exp === 0 ? digits : `${digits.slice(0, -exp)}.${digits.slice(-exp)}`;
}

/** The most digits an amount or a control sum may have (the schema's totalDigits of both types). */
export const MAX_DIGITS = 18;

/** Digits of a decimal text as the schema counts them: leading zeros and the fraction's trailing zeros do not count. */
export function valueDigits(text: string): number {
  const [whole, frac = ''] = text.split('.');
  return (whole!.replace(/^0+/, '') + frac.replace(/0+$/, '')).length;
}

/** The sum of decimal texts, exactly, at the largest number of decimals among them (CtrlSum). */
export function decimalSum(texts: readonly string[]): string {
  const scale = Math.max(0, ...texts.map((t) => (t.split('.')[1] ?? '').length));
  const total = texts.reduce((s, t) => {
    const [whole, frac = ''] = t.split('.');
    return s + BigInt(`${whole}${frac.padEnd(scale, '0')}`);
  }, 0n);
  const digits = total.toString().padStart(scale + 1, '0');
  return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

// XML 1.0 allows neither these characters nor lone surrogates in any form, escaped or not
const NOT_XML =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text for an element or attribute: the five XML specials escaped, characters XML cannot carry made spaces. */
export function xmlText(s: string): string {
  return s
    .replace(NOT_XML, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

// XML carries these, but they make a name display otherwise than it reads (a right-to-left override turns
// "Evil\u202Egnp.exe" into "Evilexe.png" in a bank's portal) or are C1 controls no bank's character set has
const DISPLAY_CONTROLS = /[\u0080-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * At most `max` characters (code points, never half a surrogate pair), spaces collapsed, for a MaxNText element;
 * direction and C1 controls made spaces, so a name reads as it displays.
 */
export function clip(s: string, max: number): string {
  const cps = [...s.replace(NOT_XML, ' ').replace(DISPLAY_CONTROLS, ' ').replace(/\s+/g, ' ').trim()];
  return cps.length <= max ? cps.join('') : cps.slice(0, max).join('');
}

/**
 * The longest debtor or creditor name a run records: the SEPA rulebook and the banks' guides to pain.001.001.09
 * (EPC, DK) take 70 characters, though the schema allows 140, and a bank checking its guide refuses the whole
 * file. Cut when a run is drafted (the writer still cuts at 140, so a run drafted before keeps its bytes).
 */
export const PARTY_NAME_MAX = 70;

// No bank's character set for transfers has pictographs (emoji and what joins them) or characters beyond the
// Basic Multilingual Plane, and one of them refuses the whole file
export const NOT_IN_BANK_SETS = /\p{Extended_Pictographic}|[\u{10000}-\u{10FFFF}]|\u200d|\u20e3|\ufe0e|\ufe0f/gu;

/**
 * A party's name as a run records it: without pictographs, at most PARTY_NAME_MAX characters, no space left at
 * the cut ('' when nothing is left: the line is left out as no_name).
 */
export const partyName = (s: string): string => clip(s.replace(NOT_IN_BANK_SETS, ' '), PARTY_NAME_MAX).trimEnd();

const IBAN = /^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/;

/** Has the form of an IBAN (whatever its check digits): one that fails them is a typo, not another kind of account. */
export const looksLikeIban = (account: string): boolean => IBAN.test(account);

/** An IBAN by its form and its ISO 13616 check digits (mod 97 = 1); anything else is an other identification. */
export function isIban(account: string): boolean {
  if (!IBAN.test(account)) return false;
  const moved = account.slice(4) + account.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const v = /\d/.test(ch) ? ch : String(ch.charCodeAt(0) - 55);
    for (const d of v) rest = (rest * 10 + Number(d)) % 97;
  }
  return rest === 1;
}

const accountXml = (account: string, pad: string) =>
  isIban(account)
    ? `${pad}<Id><IBAN>${account}</IBAN></Id>`
    : `${pad}<Id><Othr><Id>${xmlText(clip(account, 34))}</Id></Othr></Id>`;

const agentXml = (bic: string | null, pad: string) =>
  bic
    ? `${pad}<FinInstnId><BICFI>${xmlText(bic)}</BICFI></FinInstnId>`
    : `${pad}<FinInstnId><Othr><Id>NOTPROVIDED</Id></Othr></FinInstnId>`;

function transferXml(l: PaymentLine, amount: string): string[] {
  return [
    '      <CdtTrfTxInf>',
    `        <PmtId><EndToEndId>${xmlText(l.reference)}</EndToEndId></PmtId>`,
    `        <Amt><InstdAmt Ccy="${l.currency}">${amount}</InstdAmt></Amt>`,
    ...(l.creditorAgent
      ? [`        <CdtrAgt><FinInstnId><BICFI>${xmlText(l.creditorAgent)}</BICFI></FinInstnId></CdtrAgt>`]
      : []),
    `        <Cdtr><Nm>${xmlText(clip(l.creditorName, 140))}</Nm></Cdtr>`,
    '        <CdtrAcct>',
    accountXml(l.creditorAccount, '          '),
    '        </CdtrAcct>',
    `        <RmtInf><Ustrd>${xmlText(l.reference)}</Ustrd></RmtInf>`,
    '      </CdtTrfTxInf>',
  ];
}

function amountOf(l: PaymentLine): string {
  const text = decimalText(l.amount, l.currency);
  if (text === null || l.amount <= 0n)
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `${l.reference}: ${l.amount} hundredths of ${l.currency} is not a positive whole amount of ${l.currency}`,
    );
  if (valueDigits(text) > MAX_DIGITS)
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `${l.reference}: ${text} ${l.currency} has more than the ${MAX_DIGITS} digits a payment file's amount may have`,
    );
  return text;
}

function paymentInfoXml(order: PaymentOrder, d: Debtor, lines: readonly PaymentLine[]): string[] {
  const amounts = lines.map(amountOf);
  return [
    '    <PmtInf>',
    `      <PmtInfId>${xmlText(`${order.messageId}-${d.currency}`)}</PmtInfId>`,
    '      <PmtMtd>TRF</PmtMtd>',
    ...(order.individualBooking ? ['      <BtchBookg>false</BtchBookg>'] : []),
    `      <NbOfTxs>${lines.length}</NbOfTxs>`,
    `      <CtrlSum>${decimalSum(amounts)}</CtrlSum>`,
    `      <ReqdExctnDt><Dt>${order.executionDate}</Dt></ReqdExctnDt>`,
    `      <Dbtr><Nm>${xmlText(clip(d.name, 140))}</Nm></Dbtr>`,
    '      <DbtrAcct>',
    accountXml(d.account, '        '),
    '      </DbtrAcct>',
    '      <DbtrAgt>',
    agentXml(d.bic, '        '),
    '      </DbtrAgt>',
    ...lines.flatMap((l, i) => transferXml(l, amounts[i]!)),
    '    </PmtInf>',
  ];
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The creation time as the message states it: seconds, UTC. */
const creationTime = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');

/**
 * The pain.001.001.09 document (UTF-8 text). Lines are grouped by currency (sorted) and ordered by reference
 * inside, so the bytes do not depend on the order the lines were given in. Refuses a run with no line, a
 * currency without a debtor, and an amount that is not whole in its currency.
 */
export function pain001(order: PaymentOrder): string {
  if (order.lines.length === 0)
    throw new PayoutRunRefused('INVALID_INPUT', 'a payment file needs one transfer at least');
  const currencies = [...new Set(order.lines.map((l) => l.currency))].sort(byText);
  const blocks = currencies.map((c) => {
    const d = order.debtors.find((x) => x.currency === c);
    if (!d) throw new PayoutRunRefused('INVALID_INPUT', `no account to pay ${c} from`);
    const lines = order.lines.filter((l) => l.currency === c).sort((a, b) => byText(a.reference, b.reference));
    return paymentInfoXml(order, d, lines);
  });
  const all = order.lines.map(amountOf);
  // the group's control sum adds every block's: past 18 digits the bank's schema check refuses the whole file
  if (valueDigits(decimalSum(all)) > MAX_DIGITS)
    throw new PayoutRunRefused(
      'INVALID_INPUT',
      `the control sum ${decimalSum(all)} has more than the ${MAX_DIGITS} digits a payment file allows; split the run`,
    );
  const initiator = order.debtors[0]!.name;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<Document xmlns="${PAIN_001_NAMESPACE}">`,
    '  <CstmrCdtTrfInitn>',
    '    <GrpHdr>',
    `      <MsgId>${xmlText(order.messageId)}</MsgId>`,
    `      <CreDtTm>${creationTime(order.createdAt)}</CreDtTm>`,
    `      <NbOfTxs>${order.lines.length}</NbOfTxs>`,
    `      <CtrlSum>${decimalSum(all)}</CtrlSum>`,
    `      <InitgPty><Nm>${xmlText(clip(initiator, 140))}</Nm></InitgPty>`,
    '    </GrpHdr>',
    ...blocks.flat(),
    '  </CstmrCdtTrfInitn>',
    '</Document>',
    '',
  ].join('\n');
}

export const fileSha256 = (xml: string): string => sha256Hex(xml);

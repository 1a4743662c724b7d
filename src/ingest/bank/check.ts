import type { BankAccount } from '../../config/bank';
import { notWholeUnits } from '../../money';
import { formatMinor } from './amount';
import { parserFor } from './open-file';
import type { CsvMapping } from './csv';
import type { Spool, SpoolItem } from './spool';
import { BankFileError, type BankFormat, type ParsedEntry, type ParsedStatement, type StatementHead } from './types';

/**
 * The first reading of a bank file: everything is checked before anything is appended. A statement must
 * name its account and currency, carry an opening and a closing balance, and foot: opening + booked
 * entries = closing. What is kept per statement is a summary (memory does not grow with the entries); the
 * booked entries themselves go to the spool when one is given, for the append to read back.
 */

export interface StatementCheck {
  readonly statement: ParsedStatement;
  /** the configured account, or null: reported as unknown, its entries not booked */
  readonly account: BankAccount | null;
  readonly booked: number;
  readonly pending: number;
  /** every booking day in one run (so the ids' occurrence counts can be dropped day by day) */
  readonly dayOrdered: boolean;
}

export interface FileCheck {
  readonly file: string;
  readonly format: BankFormat;
  readonly statements: readonly StatementCheck[];
  readonly problems: readonly string[];
}

interface Running {
  net: bigint;
  booked: number;
  pending: number;
  day: string | null;
  days: Set<string>;
  dayOrdered: boolean;
  /** the currency the statement's entries are in (each entry's Amt Ccy), and where it was first read */
  currency: string | null;
  currencyWhere: string | null;
}

export async function checkFile(
  file: string,
  format: BankFormat,
  mapping: CsvMapping | undefined,
  accounts: readonly BankAccount[],
  spool?: Spool,
  encoding?: string,
): Promise<FileCheck> {
  const progress = newCheckProgress();
  for await (const kept of checkedItems(file, format, mapping, accounts, progress, encoding)) await spool?.write(kept);
  return { file, format, statements: progress.statements, problems: progress.problems };
}

/** A booked entry with the head of its statement as known when it was read, or a statement's end. */
export type CheckedItem = (SpoolItem & { kind: 'entry'; head: StatementHead }) | (SpoolItem & { kind: 'statement' });

/** What a reading has found so far: statements checked (in the file's order) and problems. */
export interface CheckProgress {
  readonly statements: StatementCheck[];
  readonly problems: string[];
}

export function newCheckProgress(): CheckProgress {
  return { statements: [], problems: [] };
}

/**
 * The first reading as it goes: yields the booked entries and the ends of statements of each chunk of
 * the file, as long as no problem is found (a statement's check is in `progress` when its end is
 * yielded); the reading goes on to the end after a problem, to list every problem of the file.
 */
export async function* checkedItems(
  file: string,
  format: BankFormat,
  mapping: CsvMapping | undefined,
  accounts: readonly BankAccount[],
  progress: CheckProgress,
  encoding?: string,
): AsyncGenerator<CheckedItem[]> {
  const { problems, statements } = progress;
  const running = new Map<number, Running>();
  const byId = new Map(accounts.map((a) => [a.id, a]));
  const runOf = (head: StatementHead): Running => {
    let r = running.get(head.index);
    if (!r) {
      r = {
        net: 0n,
        booked: 0,
        pending: 0,
        day: null,
        days: new Set(),
        dayOrdered: true,
        currency: null,
        currencyWhere: null,
      };
      running.set(head.index, r);
    }
    return r;
  };
  // a statement id given twice in the file: the same statement twice is harmless, other content is refused
  const seen = new Map<string, string>();
  try {
    for await (const items of parserFor(file, format, mapping, encoding)) {
      const kept: CheckedItem[] = [];
      for (const item of items) {
        if (item.kind === 'entry') {
          const err = checkEntry(item.head, item.entry, runOf(item.head));
          if (err) throw new BankFileError(file, item.entry.where, err);
          if (item.entry.status === 'booked')
            kept.push({ kind: 'entry', statement: item.head.index, entry: item.entry, head: item.head });
          continue;
        }
        kept.push({ kind: 'statement', statement: item.statement.index });
        const s = item.statement;
        const r = runOf(s);
        running.delete(s.index);
        const problem = checkStatement(s, r, byId) ?? reused(s, r, seen);
        if (problem) problems.push(`${file}: ${problem}`);
        const account = s.account ? (byId.get(s.account) ?? null) : null;
        statements.push({ statement: s, account, booked: r.booked, pending: r.pending, dayOrdered: r.dayOrdered });
      }
      if (problems.length === 0 && kept.length > 0) yield kept;
    }
  } catch (e) {
    if (!(e instanceof BankFileError)) throw e;
    problems.push(e.message);
  }
  if (problems.length === 0 && statements.length === 0) problems.push(`${file}: no statement in the file`);
}

/**
 * An amount of a fraction of its currency's smallest unit (1000.50 JPY): no bank moves one, so the file was
 * mangled or misread (a CSV mapping's column); refused rather than booked against a payout. Null when whole.
 */
function fractionOfUnit(amount: bigint, currency: string | null, what = 'amount'): string | null {
  const why = currency === null ? null : notWholeUnits(amount, currency);
  return why === null ? null : `${what} ${formatMinor(amount)} ${currency} ${why}`;
}

/**
 * The entry's amount, and what its file states with it in the entry's currency: a batch's parts, and beside stated
 * charges the transfer's own amount (camt `TxAmt`, MT940 `/OCMT/`; one in another currency is not carried) and each
 * charge (`Chrgs`, `/CHGS/`, in its own currency when it names one). A charge of 0.50 JPY folded into a whole debit
 * read the payout as paid at a fraction of a yen. A single transfer's `TxAmt` without charges is not read, and may
 * be in another currency.
 */
function fractionInEntry(e: ParsedEntry, currency: string | null): string | null {
  const charges = [...(e.charges ?? []), ...e.details.flatMap((d) => d.charges ?? [])];
  const parts = e.details.length > 1 || charges.length > 0 ? e.details : [];
  return (
    fractionOfUnit(e.amount, currency) ??
    parts
      .map((d) => (d.amount === null ? null : fractionOfUnit(d.amount, currency, 'transaction amount')))
      .find((f) => f !== null) ??
    charges.map((c) => fractionOfUnit(c.amount, c.currency ?? currency, 'charge')).find((f) => f !== null) ??
    null
  );
}

function checkEntry(head: StatementHead, e: ParsedEntry, r: Running): string | null {
  if (e.currency !== null && head.currency !== null && e.currency !== head.currency)
    return `entry in ${e.currency} on a statement in ${head.currency} (one currency per statement)`;
  if (e.currency !== null) {
    // with no Acct/Ccy, the entries must still agree with each other (and, at the end, with the balances)
    if (r.currency === null) {
      r.currency = e.currency;
      r.currencyWhere = e.where;
    } else if (r.currency !== e.currency) {
      return `entry in ${e.currency}, an earlier entry of the statement (${r.currencyWhere}) in ${r.currency} (one currency per statement)`;
    }
  }
  const fraction = fractionInEntry(e, e.currency ?? head.currency ?? r.currency);
  if (fraction) return fraction;
  if (e.status !== 'booked') {
    r.pending++;
    return null;
  }
  const signed = e.direction === 'credit' ? e.amount : -e.amount;
  if (e.details.length > 1) {
    let sum = 0n;
    for (const [i, d] of e.details.entries()) {
      if (d.amount === null) return `batch entry: transaction detail ${i + 1} of ${e.details.length} has no amount`;
      sum += (d.direction ?? e.direction) === 'credit' ? d.amount : -d.amount;
    }
    if (sum !== signed)
      return `batch entry: its transaction details add up to ${formatMinor(sum)}, the entry is ${formatMinor(signed)}`;
  }
  r.net += signed;
  r.booked++;
  const day = e.bookingDate!;
  if (day !== r.day) {
    if (r.days.has(day)) r.dayOrdered = false;
    r.days.add(day);
    r.day = day;
  }
  return null;
}

function checkStatement(s: ParsedStatement, r: Running, accounts: ReadonlyMap<string, BankAccount>): string | null {
  const name = `statement ${s.statementId ?? `#${s.index + 1}`}${s.account ? ` of account ${s.account}` : ''} (${s.where})`;
  if (s.statementId === null) return `${name}: no statement id`;
  if (s.account === null) return `${name}: no account`;
  if (s.currency === null && s.opening?.currency == null) return `${name}: no currency`;
  const currency = s.currency ?? s.opening!.currency!;
  (s as { currency: string }).currency = currency;
  if (s.opening === null) return `${name}: no opening balance (OPBD/PRCD, :60F:)`;
  if (s.closing === null) return `${name}: no closing balance (CLBD, :62F:)`;
  for (const b of [s.opening, s.closing]) {
    if (b.currency !== null && b.currency !== currency)
      return `${name}: balance in ${b.currency} (${b.where}), statement in ${currency}`;
    const fraction = fractionOfUnit(b.amount, currency);
    if (fraction) return `${name}: balance (${b.where}) ${fraction}`;
  }
  if (r.currency !== null && r.currency !== currency)
    return `${name}: entries in ${r.currency} (${r.currencyWhere}), the statement is in ${currency} (one currency per statement)`;
  const configured = accounts.get(s.account);
  if (configured && configured.currency !== currency)
    return `${name}: the statement is in ${currency}, the account is configured in ${configured.currency}`;
  const footed = s.opening.amount + r.net;
  if (footed !== s.closing.amount)
    return (
      `${name} does not foot: opening ${formatMinor(s.opening.amount)} + booked entries ${formatMinor(r.net)} = ` +
      `${formatMinor(footed)}, closing balance ${formatMinor(s.closing.amount)}: difference ${formatMinor(s.closing.amount - footed)} ${currency}`
    );
  return null;
}

/** The same statement id twice in one file, with other balances or entries: refused, naming the id. */
function reused(s: ParsedStatement, r: Running, seen: Map<string, string>): string | null {
  const key = `${s.account}\u0000${s.statementId}`;
  const content = [s.opening!.date, s.opening!.amount, s.closing!.date, s.closing!.amount, r.booked, r.net].join(' ');
  const before = seen.get(key);
  if (before === undefined) {
    seen.set(key, content);
    return null;
  }
  return before === content
    ? null
    : `statement id ${s.statementId} of account ${s.account} (${s.where}): given twice in the file with other content`;
}

import { DateTime } from 'luxon';
import { normalizeAccountId } from '../../config/bank';

/**
 * Matching the debits of the `payouts` bank accounts to the payouts the statements said were due
 * (docs/bank.md, "Payouts and holds"). A pure function of its inputs: both lists are put in a canonical
 * order first (expected payouts by reference, bank lines by booking day then event id), so the result is
 * the same whatever order the events were imported in, and the same on a replay.
 */

export interface ExpectedPayout {
  /** the statement number finance writes in the transfer's remittance text (src/export/statements/payout-references.ts) */
  readonly reference: string;
  readonly subMerchantId: string;
  readonly currency: string;
  /** minor units, > 0 */
  readonly amount: bigint;
  /** local day (RECON_TIMEZONE) the statement was issued */
  readonly issuedOn: string;
  /** the payee's account (directory `payout_account`) and name, as the directory gives them */
  readonly payeeAccount: string | null;
  readonly payeeName: string;
  readonly eventId: string;
}

export interface PayoutBankLine {
  /** the BankEntryBooked event id */
  readonly id: string;
  readonly accountId: string;
  readonly currency: string;
  readonly direction: 'credit' | 'debit';
  readonly amount: bigint;
  readonly bookingDate: string;
  readonly endToEndId: string | null;
  readonly remittance: string | null;
  readonly counterpartyName: string | null;
  readonly counterpartyAccount: string | null;
  readonly isReturn: boolean;
  /** the bank's own reference of the line (camt AcctSvcrRef, MT940 bank reference), when given */
  readonly bankRef?: string | null;
  /**
   * not in `amount`: on a debit the bank's charge folded into it (bank-charges.ts `foldedChargeOf`), on a return the
   * charge it gave back with the debit (`chargesGivenBack`); none: 0
   */
  readonly charge?: bigint;
}

/**
 * A return that gives a debit back whole, the charge the bank folded into it too (the bank reversing its own
 * debit, at its `Amt`): the payout came back at what it paid, and the rest is the bank's charge given back, never
 * the payee's money (a return read at its whole amount owed the payee the charge, and a bank fee stayed booked that
 * the bank no longer took). Recognised as a return credit of exactly a folded debit's payout and charge, on its
 * account, in its currency, booked on or after it and naming what it named (end-to-end id or remittance); each
 * debit given back once, in day order.
 */
export function chargesGivenBack(lines: readonly PayoutBankLine[]): PayoutBankLine[] {
  const byDay = (a: PayoutBankLine, b: PayoutBankLine) =>
    a.bookingDate !== b.bookingDate ? (a.bookingDate < b.bookingDate ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  const folded = lines.filter((l) => l.direction === 'debit' && !l.isReturn && (l.charge ?? 0n) > 0n).sort(byDay);
  if (folded.length === 0) return [...lines];
  const named = (a: string | null, b: string | null) => a !== null && a === b;
  const back = new Map<string, PayoutBankLine>();
  for (const l of lines.filter((x) => x.direction === 'credit' && x.isReturn).sort(byDay)) {
    const i = folded.findIndex(
      (d) =>
        d.accountId === l.accountId &&
        d.currency === l.currency &&
        d.bookingDate <= l.bookingDate &&
        d.amount + d.charge! === l.amount &&
        (named(d.endToEndId, l.endToEndId) || named(d.remittance, l.remittance)),
    );
    if (i < 0) continue;
    const d = folded.splice(i, 1)[0]!;
    back.set(l.id, { ...l, amount: d.amount, charge: d.charge! });
  }
  return lines.map((l) => back.get(l.id) ?? l);
}

/** How a bank line was read: `paid` pays a payout, `duplicate` pays one again, `returned` gives one back. */
export type LineRole = 'paid' | 'duplicate' | 'returned' | 'unexpected';

export interface LineMatch {
  readonly lineId: string;
  readonly role: LineRole;
  /** null for an unexpected line (and a return no payout is known for) */
  readonly reference: string | null;
  readonly by: 'reference' | 'payee' | null;
}

export interface PayoutMatches {
  /** one per bank line given, in canonical order */
  readonly lines: readonly LineMatch[];
}

const REF_CHARS = /[A-Z0-9-]/;

/** The references a text carries as whole words (so `RS-A-2026-10-EUR` is not read inside `…-EUR-2`). */
export function referencesIn(text: string | null, references: ReadonlySet<string>): string[] {
  if (!text) return [];
  const t = text.toUpperCase();
  const out: string[] = [];
  for (const ref of references) {
    let at = t.indexOf(ref);
    while (at >= 0) {
      const before = at === 0 ? '' : t[at - 1]!;
      const after = t[at + ref.length] ?? '';
      if (!REF_CHARS.test(before) && !REF_CHARS.test(after)) {
        out.push(ref);
        break;
      }
      at = t.indexOf(ref, at + 1);
    }
  }
  return out.sort();
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const nameKey = (s: string | null) => (s ?? '').normalize('NFKC').trim().replace(/\s+/g, ' ').toUpperCase();

function canonicalLines(lines: readonly PayoutBankLine[]): PayoutBankLine[] {
  return [...lines].sort((a, b) => byText(a.bookingDate, b.bookingDate) || byText(a.id, b.id));
}

function inWindow(p: ExpectedPayout, day: string, windowDays: number): boolean {
  const last = DateTime.fromISO(p.issuedOn, { zone: 'UTC' }).plus({ days: windowDays }).toISODate()!;
  return day >= p.issuedOn && day <= last;
}

function payeeMatches(p: ExpectedPayout, l: PayoutBankLine): boolean {
  if (p.payeeAccount && l.counterpartyAccount)
    return normalizeAccountId(p.payeeAccount) === normalizeAccountId(l.counterpartyAccount);
  return !!l.counterpartyName && nameKey(l.counterpartyName) === nameKey(p.payeeName);
}

/** The reference a line names: in its end-to-end id first, then in its remittance text (the first, sorted). */
function namedReference(l: PayoutBankLine, byRef: ReadonlyMap<string, ExpectedPayout>): string | null {
  const refs = new Set(byRef.keys());
  const named = [...referencesIn(l.endToEndId, refs), ...referencesIn(l.remittance, refs)].filter(
    (r) => byRef.get(r)!.currency === l.currency,
  );
  return named[0] ?? null;
}

/**
 * The returns the bank took back: a debit marked as a return (MT940 `RC`, camt `RvslInd` on a debit: a credit
 * reversed) undoes the latest return credit of its account and amount booked on or before it, which then gives
 * back nothing (the payee kept the money; read as a return, the payout would be drafted again).
 */
function undoneReturns(lines: readonly PayoutBankLine[]): Set<string> {
  const undone = new Set<string>();
  for (const r of lines) {
    if (r.direction !== 'debit' || !r.isReturn) continue;
    const back = lines.findLast(
      (l) =>
        l.direction === 'credit' &&
        l.isReturn &&
        !undone.has(l.id) &&
        l.accountId === r.accountId &&
        l.currency === r.currency &&
        // whole amounts: a return that gave a folded charge back carries it apart (chargesGivenBack)
        l.amount + (l.charge ?? 0n) === r.amount + (r.charge ?? 0n) &&
        l.bookingDate <= r.bookingDate,
    );
    if (back) undone.add(back.id);
  }
  return undone;
}

/**
 * A payout's debits in day order (after both passes): the first that complete it pay it, the later ones pay it
 * again. The debits naming a reference are matched first, whatever their day, so a payout paid on time by a
 * transfer without its reference (by payee) and again, later, by one naming it read paid late, and the on-time
 * debit as the duplicate (`test/review13/payout-paid-on-time-then-again-by-reference.test.ts`). Only payouts
 * paid again are looked at; `paid` and `payers` follow.
 */
function inDayOrder(
  lines: readonly PayoutBankLine[],
  out: Map<string, LineMatch>,
  byRef: ReadonlyMap<string, ExpectedPayout>,
  namedReturns: ReadonlyMap<string, readonly PayoutBankLine[]>,
  paid: Map<string, bigint>,
  payers: Map<string, PayoutBankLine[]>,
): void {
  const debitsOf = new Map<string, PayoutBankLine[]>();
  for (const l of lines) {
    const m = out.get(l.id);
    if (m?.reference && (m.role === 'paid' || m.role === 'duplicate'))
      debitsOf.set(m.reference, [...(debitsOf.get(m.reference) ?? []), l]);
  }
  for (const [ref, ls] of debitsOf) {
    if (!ls.some((l) => out.get(l.id)!.role === 'duplicate')) continue;
    const p = byRef.get(ref)!;
    const back = (day: string) =>
      (namedReturns.get(ref) ?? []).reduce((s, r) => (r.bookingDate <= day ? s + r.amount : s), 0n);
    let sum: bigint | null = null;
    const by: PayoutBankLine[] = [];
    for (const l of ls) {
      const m = out.get(l.id)!;
      if (sum !== null && sum - back(l.bookingDate) >= p.amount) {
        out.set(l.id, { ...m, role: 'duplicate' });
        continue;
      }
      sum = (sum ?? 0n) + l.amount;
      by.push(l);
      out.set(l.id, { ...m, role: 'paid' });
    }
    paid.set(ref, sum ?? 0n);
    payers.set(ref, by);
  }
}

/**
 * Debits pay payouts (by reference, else payee and exact amount within `windowDays` of issue); a debit beyond
 * what a payout asked, for a payout already paid in full, is a duplicate; returns give a payout's money back.
 */
export function matchPayouts(
  expected: readonly ExpectedPayout[],
  bankLines: readonly PayoutBankLine[],
  opts: { windowDays: number },
): PayoutMatches {
  const byRef = new Map([...expected].sort((a, b) => byText(a.reference, b.reference)).map((p) => [p.reference, p]));
  const paid = new Map<string, bigint>();
  const payers = new Map<string, PayoutBankLine[]>();
  const out = new Map<string, LineMatch>();
  const lines = canonicalLines(bankLines);
  // A return naming its payout, booked on or before a debit, gives the payout's money back before it: a payout
  // the bank sent back and paid again (to a new account) is paid once, not paid twice.
  const undone = undoneReturns(lines);
  const namedReturns = new Map<string, PayoutBankLine[]>();
  for (const l of lines) {
    const ref = l.direction === 'credit' && l.isReturn && !undone.has(l.id) ? namedReference(l, byRef) : null;
    if (ref) namedReturns.set(ref, [...(namedReturns.get(ref) ?? []), l]);
  }
  const netPaid = (p: ExpectedPayout, day: string) =>
    (namedReturns.get(p.reference) ?? []).reduce(
      (s, r) => (r.bookingDate <= day ? s - r.amount : s),
      paid.get(p.reference) ?? 0n,
    );
  const claim = (l: PayoutBankLine, p: ExpectedPayout, by: 'reference' | 'payee') => {
    const before = paid.get(p.reference) ?? 0n;
    // the first debit that pays a payout pays it, even one a correction lowered to nothing since (reported beyond)
    if (paid.has(p.reference) && netPaid(p, l.bookingDate) >= p.amount) {
      out.set(l.id, { lineId: l.id, role: 'duplicate', reference: p.reference, by });
      return;
    }
    paid.set(p.reference, before + l.amount);
    payers.set(p.reference, [...(payers.get(p.reference) ?? []), l]);
    out.set(l.id, { lineId: l.id, role: 'paid', reference: p.reference, by });
  };
  const debits = lines.filter((l) => l.direction === 'debit' && !l.isReturn);
  // Pass 1: a debit naming a statement pays it, whatever its amount (a part, or a difference to report).
  for (const l of debits) {
    const ref = namedReference(l, byRef);
    if (ref) claim(l, byRef.get(ref)!, 'reference');
  }
  // Pass 2: the payee and the exact amount, within the window, of a payout nothing has paid yet.
  for (const l of debits) {
    if (out.has(l.id)) continue;
    const candidates = [...byRef.values()].filter(
      (p) => p.currency === l.currency && p.amount === l.amount && inWindow(p, l.bookingDate, opts.windowDays),
    );
    const open = candidates.find((p) => netPaid(p, l.bookingDate) <= 0n && payeeMatches(p, l));
    const again = candidates.find((p) => paid.has(p.reference) && payeeMatches(p, l));
    if (open) claim(l, open, 'payee');
    else if (again) out.set(l.id, { lineId: l.id, role: 'duplicate', reference: again.reference, by: 'payee' });
    else out.set(l.id, { lineId: l.id, role: 'unexpected', reference: null, by: null });
  }
  inDayOrder(lines, out, byRef, namedReturns, paid, payers);
  // Returns: by reference, else the payee and amount of a debit that paid a payout on or before it.
  for (const l of lines) {
    if (l.direction !== 'credit' || !l.isReturn || undone.has(l.id)) continue;
    const ref = namedReference(l, byRef);
    if (ref) {
      out.set(l.id, { lineId: l.id, role: 'returned', reference: ref, by: 'reference' });
      continue;
    }
    const paidBy = [...payers.entries()].find(([r, ls]) =>
      ls.some(
        (d) =>
          d.amount === l.amount &&
          d.currency === l.currency &&
          d.bookingDate <= l.bookingDate &&
          payeeMatches(byRef.get(r)!, l),
      ),
    );
    out.set(l.id, {
      lineId: l.id,
      role: 'returned',
      reference: paidBy ? paidBy[0] : null,
      by: paidBy ? 'payee' : null,
    });
  }
  return { lines: lines.filter((l) => out.has(l.id)).map((l) => out.get(l.id)!) };
}

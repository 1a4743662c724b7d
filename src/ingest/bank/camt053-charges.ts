import type { SaxesTagPlain } from 'saxes';
import { maskPans } from '../../input-rules';
import { minorUnits } from './amount';
import { MAX_CHARGES } from './camt-rules';
import { type Charges, type Entry, newCharge } from './camt053-elements';
import type { Direction } from './types';

/**
 * A transfer's charges in a camt.053 (`Ntry/Chrgs`, `TxDtls/Chrgs`), read as the statement streams past:
 * .001.02's `Amt` on `Chrgs` itself, later versions' `Rcrd`s, or a total alone. Every amount is read as the
 * entry's are (never negative, at most two decimals and 15 digits): a bad one refuses the file, naming the
 * element and its line, so nothing of it is imported. The reader (camt053.ts) gives its own checks.
 */

export interface ChargeChecks {
  fail(path: string, problem: string): never;
  currencyOf(path: string, c: string): string;
  directionOf(path: string, s: string | null): Direction;
}

export interface ChargeReading {
  /** a `Chrgs` is being read: its elements are this module's */
  readonly reading: boolean;
  /** an entry begins: its count of charges starts again */
  newEntry(): void;
  /** an element opened (`Chrgs` itself begins a reading, where an entry or its detail holds it) */
  open(path: string, parent: string | undefined, tag: SaxesTagPlain, inEntry: boolean): void;
  /** an element closed, its text `t`; a charge finished goes to `into` (the detail's or the entry's) */
  close(path: string, t: string, into: Entry['charges']): void;
}

/** The reading's state: the `Chrgs` open (null: none), its path, the entry's charges so far. */
interface State {
  c: Charges | null;
  at: string;
  count: number;
}

function amountOf(checks: ChargeChecks, path: string, t: string): bigint {
  const v = minorUnits(t, '.');
  return typeof v === 'string' ? checks.fail(path, v) : v;
}

function indicatorOf(checks: ChargeChecks, path: string, t: string): boolean {
  const v = t.trim();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return checks.fail(path, `expected true or false, got ${JSON.stringify(maskPans(v).slice(0, 40))}`);
}

function keep(s: State, checks: ChargeChecks, path: string, into: Entry['charges'], charge: Entry['charges'][number]) {
  if (++s.count > MAX_CHARGES) checks.fail(path, `more than ${MAX_CHARGES} charges in one entry`);
  into.push(charge);
}

function open(
  s: State,
  checks: ChargeChecks,
  path: string,
  parent: string | undefined,
  tag: SaxesTagPlain,
  inEntry: boolean,
) {
  const c = s.c;
  if (c === null) {
    if (!inEntry || (parent !== 'Stmt/Ntry' && parent !== 'Stmt/Ntry/NtryDtls/TxDtls')) return;
    s.c = { own: newCharge(), record: null, total: null, records: 0 };
    s.at = path;
    return;
  }
  const rel = path.slice(s.at.length);
  if (rel === '/Rcrd') c.record = newCharge();
  else if (rel === '/Amt' || rel === '/Rcrd/Amt' || rel === '/TtlChrgsAndTaxAmt') {
    const ccy = tag.attributes['Ccy'];
    const currency = typeof ccy === 'string' ? checks.currencyOf(path, ccy) : null;
    if (rel === '/Rcrd/Amt' && c.record) c.record.currency = currency;
    else if (rel === '/Amt') c.own.currency = currency;
    else c.total = { amount: 0n, currency };
  }
}

function close(s: State, checks: ChargeChecks, path: string, t: string, into: Entry['charges']) {
  const c = s.c!;
  const rel = path.slice(s.at.length);
  const r = c.record;
  switch (rel) {
    case '/Amt':
      c.own.amount = amountOf(checks, path, t);
      return;
    case '/CdtDbtInd':
      c.own.direction = checks.directionOf(path.slice(0, -10), t.trim());
      return;
    case '/TtlChrgsAndTaxAmt':
      c.total = { amount: amountOf(checks, path, t), currency: c.total?.currency ?? null };
      return;
    case '/Rcrd/Amt':
      if (r) r.amount = amountOf(checks, path, t);
      return;
    case '/Rcrd/CdtDbtInd':
      if (r) r.direction = checks.directionOf(path.slice(0, -10), t.trim());
      return;
    case '/Rcrd/ChrgInclInd':
      if (r) r.included = indicatorOf(checks, path, t);
      return;
    case '/Rcrd':
      if (r?.amount == null) checks.fail(path, 'a charge record without Amt');
      keep(s, checks, path, into, { ...r, amount: r.amount });
      c.record = null;
      c.records++;
      return;
    case '':
      // .001.02: the charge is Chrgs itself; later: a total alone stands for the charges when no record is given
      if (c.own.amount !== null) keep(s, checks, path, into, { ...c.own, amount: c.own.amount });
      else if (c.records === 0 && c.total !== null)
        keep(s, checks, path, into, { ...c.total, direction: null, included: null });
      s.c = null;
      return;
  }
}

export function chargeReading(checks: ChargeChecks): ChargeReading {
  const s: State = { c: null, at: '', count: 0 };
  return {
    get reading() {
      return s.c !== null;
    },
    newEntry: () => {
      s.count = 0;
    },
    open: (path, parent, tag, inEntry) => open(s, checks, path, parent, tag, inEntry),
    close: (path, t, into) => close(s, checks, path, t, into),
  };
}

import type { ParsedCharge, ParsedEntry } from './types';

/**
 * The pieces of a camt.053 statement as they are gathered while its elements stream past (camt053.ts), and
 * the small pure helpers its reader uses on every element.
 */

export interface Balance {
  type: string | null;
  amount: string | null;
  currency: string | null;
  sign: string | null;
  date: string | null;
}

export interface Detail {
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
  charges: ParsedCharge[];
}

/**
 * One `Chrgs` being read: .001.02 writes a charge's `Amt` on `Chrgs` itself (one `Chrgs` per charge), later
 * versions one `Rcrd` per charge under it, with `TtlChrgsAndTaxAmt` beside them.
 */
export interface Charges {
  /** the `Amt` (and its `Ccy`) of `Chrgs` itself (.001.02), or of the `Rcrd` being read */
  own: Charge;
  record: Charge | null;
  total: { amount: bigint; currency: string | null } | null;
  records: number;
}

export interface Charge {
  amount: bigint | null;
  currency: string | null;
  direction: ParsedCharge['direction'];
  included: boolean | null;
}

export const newCharge = (): Charge => ({ amount: null, currency: null, direction: null, included: null });

export interface Entry {
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
  charges: ParsedCharge[];
  index: number;
}

export const newBalance = (): Balance => ({ type: null, amount: null, currency: null, sign: null, date: null });

export const newDetail = (): Detail => ({
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
  charges: [],
});

export const newEntry = (index: number): Entry => ({
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
  charges: [],
  index,
});

export const localName = (name: string): string => {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
};

export const none = (s: string): string | null => {
  const t = s.trim();
  return t === '' || t === 'NOTPROVIDED' ? null : t;
};

export const STATUS: Record<string, ParsedEntry['status']> = { BOOK: 'booked', PDNG: 'pending', INFO: 'info' };

/** Bank transaction codes of a returned payment (ISO 20022 external code list, sub-family). */
export const RETURN_SUB_FAMILIES = new Set(['RRTN', 'RPCR', 'UPCT']);

/**
 * The same path string object for every element at the same place: the switches of the reader then compare
 * by identity first, and no path is built again per element.
 */
const CHILD_PATHS = new Map<string, Map<string, string>>();
export function childPath(parent: string, name: string): string {
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

export function codeOf(x: {
  domain: string | null;
  family: string | null;
  subFamily: string | null;
  proprietary: string | null;
}): string | null {
  if (x.domain !== null) return [x.domain, x.family, x.subFamily].filter((p) => p !== null).join('/');
  return x.proprietary;
}

/** saxes prefixes its messages with its own position: the position is given separately. */
export function xmlProblem(e: unknown): string {
  const m = (e as Error)?.message ?? String(e);
  return `not well-formed XML: ${m.replace(/^(?:[^:]*:)?\d+:\d+: /, '')}`;
}

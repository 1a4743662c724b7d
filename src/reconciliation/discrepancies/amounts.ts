/**
 * The money of a discrepancy, read from its values alone (pure, no formatting): the amount at stake and the
 * amount in doubt. In the core so that every leg's rows carry `amount_in_doubt` (columns.ts), which readers
 * filter and sort on in SQL; discrepancy-summary.ts words them for readers.
 */

/** What a discrepancy's money is read from. */
export interface Valued {
  readonly type?: string;
  readonly values: Record<string, unknown> | null;
  /** not read: callers pass a whole record */
  readonly currency?: string | null;
}

const SOURCES = ['register', 'period', 'webhook'] as const;
type Source = (typeof SOURCES)[number];

const bigOf = (v: unknown): bigint | null => (typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : null);
const absOf = (x: bigint | null): bigint | null => (x === null ? null : x < 0n ? -x : x);

const sourceOf = (d: Pick<Valued, 'values'>, s: Source): Record<string, unknown> | null => {
  const v = d.values?.[s];
  return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
};

/** Each source's value of one field (minor units), and the difference between the extremes (null: under two). */
export function perSource(
  d: Pick<Valued, 'values'>,
  field: (s: Source, v: Record<string, unknown>) => unknown,
): { values: Partial<Record<Source, bigint>>; difference: bigint | null } {
  const values: Partial<Record<Source, bigint>> = {};
  for (const s of SOURCES) {
    const v = sourceOf(d, s);
    const x = v ? bigOf(field(s, v)) : null;
    if (x !== null) values[s] = x;
  }
  const xs = Object.values(values) as bigint[];
  const difference = xs.length > 1 ? xs.reduce((a, b) => (b > a ? b : a)) - xs.reduce((a, b) => (b < a ? b : a)) : null;
  return { values, difference };
}

/** The merchant fee as each source states it: register/period `merchant_fee`, webhook `fee`. */
export const feeField = (s: Source, v: Record<string, unknown>): unknown => (s === 'webhook' ? v.fee : v.merchant_fee);

/**
 * The amount at stake (minor units), or null: for the PSP's sources, the largest amount any source states
 * for the operation; for the other legs, the money the discrepancy is about (legAmount).
 */
export function discrepancyAmount(d: Valued): bigint | null {
  let best: bigint | null = null;
  for (const s of SOURCES) {
    const a = bigOf(sourceOf(d, s)?.amount);
    if (a !== null && (best === null || (a < 0n ? -a : a) > (best < 0n ? -best : best))) best = a;
  }
  return best ?? (d.type ? legAmount(d.type, d.values ?? {}) : null);
}

/**
 * The money a discrepancy of the settlement, payout, fee-contract or order legs is about: what was due
 * (a settlement, a payout), what the bank line moved, the part a fee was charged on, the payment or order.
 */
function legAmount(type: string, v: Record<string, unknown>): bigint | null {
  switch (type) {
    case 'settlement_missing':
    case 'settlement_short':
    case 'payout_missing':
    case 'payout_amount_mismatch':
      return bigOf(v.expected);
    case 'settlement_late':
      return bigOf(v.received);
    case 'settlement_recovered':
      return bigOf(v.recovered);
    case 'settlement_gain_taken_back':
      return bigOf(v.taken_back);
    case 'settlement_unexpected':
    case 'payout_unexpected':
    case 'payout_duplicate':
    case 'payout_returned':
      return bigOf(v.amount);
    case 'fee_above_contract':
    case 'fee_below_contract':
      return bigOf(v.part);
    case 'order_not_at_psp':
      return bigOf(v.order_amount);
    case 'payment_without_order':
    case 'amount_differs_from_order':
    case 'split_differs_from_order':
      return bigOf(v.psp_amount) ?? sumOf(v.psp_split);
    case 'duplicate': {
      const rows = Array.isArray(v.rows) ? (v.rows as Array<Record<string, unknown>>) : [];
      return bigOf(rows[0]?.amount);
    }
    default:
      return null;
  }
}

/** The sum of the `amount`s of a list of parts, or null when one is not an amount. */
function sumOf(parts: unknown): bigint | null {
  if (!Array.isArray(parts) || parts.length === 0) return null;
  const amounts = parts.map((p) => bigOf((p as { amount?: unknown })?.amount));
  return amounts.every((a) => a !== null) ? (amounts as bigint[]).reduce((a, b) => a + b, 0n) : null;
}

/** What a payout or settlement discrepancy puts in doubt: the money missing, short, late or unexplained. */
function cashInDoubt(type: string, v: Record<string, unknown>): bigint | null | undefined {
  switch (type) {
    case 'payout_missing': {
      const e = bigOf(v.expected);
      return e === null ? null : absOf(e - (bigOf(v.paid_out) ?? 0n));
    }
    case 'payout_amount_mismatch': {
      const e = bigOf(v.expected);
      const paid = bigOf(v.paid_out);
      return e === null || paid === null ? null : absOf(paid - e);
    }
    case 'payout_unexpected':
    case 'payout_duplicate':
    case 'payout_returned':
    case 'settlement_unexpected':
      return absOf(bigOf(v.amount));
    case 'settlement_missing':
      return absOf(bigOf(v.expected));
    case 'settlement_short':
      return absOf(bigOf(v.shortfall));
    case 'settlement_late':
      return absOf(bigOf(v.received));
    // the money came and the journal booked it, or its day is owed again (in doubt on the day's own discrepancy):
    // nothing is in doubt here, a write-off is to review
    // a gain taken back: the credit is booked once by its match (or gone back to the bank), nothing in doubt
    case 'settlement_recovered':
    case 'settlement_gain_taken_back':
      return null;
    default:
      return undefined;
  }
}

/**
 * The money a discrepancy puts in doubt (minor units, never negative), or null when it concerns no amount.
 * A discrepancy that holds its payment (an amount, status, owner or split in doubt) doubts the whole
 * payment; a fee difference, the difference; money missing, short or unexpected, that money.
 */
export function amountInDoubt(d: Valued & { readonly type: string }): bigint | null {
  const v = d.values ?? {};
  const cash = cashInDoubt(d.type, v);
  if (cash !== undefined) return cash;
  switch (d.type) {
    case 'fee_mismatch':
      return absOf(perSource(d, feeField).difference);
    case 'split_mismatch':
      return absOf(discrepancyAmount(d) ?? bigOf(v.original_amount));
    case 'report_count_mismatch':
      return null;
    case 'order_not_at_psp':
      return absOf(bigOf(v.order_amount));
    case 'payment_without_order':
    case 'amount_differs_from_order':
      return absOf(bigOf(v.psp_amount));
    case 'split_differs_from_order': {
      const split = Array.isArray(v.psp_split) ? (v.psp_split as Array<{ amount?: unknown }>) : [];
      const amounts = split.map((x) => bigOf(x?.amount));
      return amounts.length && amounts.every((a) => a !== null)
        ? absOf((amounts as bigint[]).reduce((a, b) => a + b, 0n))
        : null;
    }
    case 'fee_above_contract':
    case 'fee_below_contract':
      return absOf(bigOf(v.difference));
    default:
      return absOf(discrepancyAmount(d));
  }
}

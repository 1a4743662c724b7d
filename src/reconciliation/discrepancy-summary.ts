import { formatMinor } from '../money';
import type { DiscrepancyRecord } from './discrepancy-types';

/**
 * A discrepancy in a reader's words: the amount at stake and what differs between the sources, with each
 * source's value and the difference (the CLI table, the nightly workbook and the CSV share these).
 */

const SOURCES = ['register', 'period', 'webhook'] as const;
type Source = (typeof SOURCES)[number];

const bigOf = (v: unknown): bigint | null => (typeof v === 'string' && /^-?\d+$/.test(v) ? BigInt(v) : null);
const sourceOf = (d: Pick<DiscrepancyRecord, 'values'>, s: Source): Record<string, unknown> | null => {
  const v = d.values?.[s];
  return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
};

/** Minor units as major units with the currency code: "1,234.50 UAH". */
export function moneyText(minor: bigint, currency: string | null): string {
  const [whole, frac] = formatMinor(minor).split('.') as [string, string];
  const sign = whole.startsWith('-') ? '-' : '';
  const grouped = whole.replace('-', '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${grouped}.${frac}${currency ? ` ${currency}` : ''}`;
}

/** The amount at stake: the largest amount any source states for the operation (minor units), or null. */
export function discrepancyAmount(d: Pick<DiscrepancyRecord, 'values'>): bigint | null {
  let best: bigint | null = null;
  for (const s of SOURCES) {
    const a = bigOf(sourceOf(d, s)?.amount);
    if (a !== null && (best === null || (a < 0n ? -a : a) > (best < 0n ? -best : best))) best = a;
  }
  return best;
}

/** Each source's value of one field ("register 10.00, period 9.00") and the difference between extremes. */
function perSourceMoney(
  d: Pick<DiscrepancyRecord, 'values' | 'currency'>,
  field: (s: Source, v: Record<string, unknown>) => unknown,
): { text: string; values: Partial<Record<Source, bigint>>; difference: bigint | null } {
  const values: Partial<Record<Source, bigint>> = {};
  const parts: string[] = [];
  for (const s of SOURCES) {
    const v = sourceOf(d, s);
    if (!v) continue;
    const x = bigOf(field(s, v));
    if (x === null) continue;
    values[s] = x;
    parts.push(`${s} ${moneyText(x, d.currency)}`);
  }
  const xs = Object.values(values) as bigint[];
  const difference = xs.length > 1 ? xs.reduce((a, b) => (b > a ? b : a)) - xs.reduce((a, b) => (b < a ? b : a)) : null;
  return { text: parts.join(', '), values, difference };
}

/** Merchant fee as each source states it: register/period `merchant_fee`, webhook `fee`. */
export function feeValues(d: Pick<DiscrepancyRecord, 'values' | 'currency'>) {
  return perSourceMoney(d, (s, v) => (s === 'webhook' ? v.fee : v.merchant_fee));
}

/** What differs, with each source's value and the difference, in one line. */
export function whatDiffers(d: Pick<DiscrepancyRecord, 'type' | 'values' | 'currency' | 'receiver_name'>): string {
  const withDifference = (label: string, r: { text: string; difference: bigint | null }) =>
    `${label}: ${r.text}${r.difference !== null ? `; difference ${moneyText(r.difference, d.currency)}` : ''}`;
  const plain = (field: string) =>
    SOURCES.map((s) => {
      const v = sourceOf(d, s);
      return `${s} ${v ? String(v[field] ?? '-') : 'absent'}`;
    }).join(', ');
  switch (d.type) {
    case 'amount_mismatch':
      return withDifference(
        'amount',
        perSourceMoney(d, (_s, v) => v.amount),
      );
    case 'fee_mismatch':
      return withDifference('merchant fee', feeValues(d));
    case 'split_mismatch': {
      const shares = bigOf(d.values.shares_sum);
      const amount = bigOf(d.values.original_amount);
      if (shares === null || amount === null) return 'receivers’ shares do not add up to the amount';
      return `receivers’ shares ${moneyText(shares, d.currency)}, amount ${moneyText(amount, d.currency)}; difference ${moneyText(shares - amount, d.currency)}`;
    }
    case 'status_mismatch':
      return `status: ${plain('status')}`;
    case 'currency_mismatch':
      return `currency: ${plain('currency')}`;
    case 'missing_in_report':
      return 'not in the register report of a window synced after the grace period';
    case 'missing_in_period':
      return 'not in the period transactions of a window synced after the grace period';
    case 'missing_webhook':
      return 'no webhook, a re-send was asked for';
    case 'unknown_sub_merchant':
      return `receiver ${d.receiver_name ?? '?'} is not in the sub-merchant directory`;
    case 'duplicate':
      return `${String(d.values.source ?? 'a source')} reported the operation more than once`;
    default:
      return d.type.replace(/_/g, ' ');
  }
}

/** The difference in money a discrepancy shows (amount, merchant fee, split), minor units; null for others. */
export function moneyDifference(d: Pick<DiscrepancyRecord, 'type' | 'values' | 'currency'>): bigint | null {
  if (d.type === 'amount_mismatch') return perSourceMoney(d, (_s, v) => v.amount).difference;
  if (d.type === 'fee_mismatch') return feeValues(d).difference;
  if (d.type === 'split_mismatch') {
    const shares = bigOf(d.values.shares_sum);
    const amount = bigOf(d.values.original_amount);
    return shares === null || amount === null ? null : shares - amount;
  }
  return null;
}

const absOf = (x: bigint | null): bigint | null => (x === null ? null : x < 0n ? -x : x);

/**
 * The money a discrepancy puts in doubt (minor units, never negative), or null when it concerns no amount.
 * A discrepancy that holds its payment (an amount, status, owner or split in doubt) doubts the whole
 * payment; a fee difference, the difference; money missing, short or unexpected, that money.
 */
export function amountInDoubt(d: Pick<DiscrepancyRecord, 'type' | 'values' | 'currency'>): bigint | null {
  const v = d.values ?? {};
  switch (d.type) {
    case 'fee_mismatch':
      return absOf(feeValues(d).difference);
    case 'split_mismatch':
      return absOf(discrepancyAmount(d) ?? bigOf(v.original_amount));
    case 'report_count_mismatch':
      return null;
    case 'payout_missing': {
      const e = bigOf(v.expected);
      const paid = bigOf(v.paid_out) ?? 0n;
      return e === null ? null : absOf(e - paid);
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

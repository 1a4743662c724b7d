import { formatMinor } from '../money';
import { amountInDoubt, discrepancyAmount } from './discrepancies/amounts';
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

/**
 * What differs, with each source's value and the difference, in one line; for an accepted discrepancy whose amount
 * in doubt has changed since, both amounts after it (the values shown are the ones accepted).
 */
export function whatDiffers(
  d: Pick<DiscrepancyRecord, 'type' | 'values' | 'currency' | 'receiver_name' | 'since_accepted'>,
): string {
  const s = d.since_accepted;
  if (!s) return valuesDiffer(d);
  const m = (x: string | null) => (x === null ? 'nothing' : moneyText(BigInt(x), d.currency));
  return `${valuesDiffer(d)}; accepted with ${m(s.amount_in_doubt)} in doubt, ${m(s.amount_in_doubt_now)} in doubt now`;
}

function valuesDiffer(d: Pick<DiscrepancyRecord, 'type' | 'values' | 'currency' | 'receiver_name'>): string {
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
      return legDiffers(d) ?? d.type.replace(/_/g, ' ');
  }
}

/** What differs for the settlement, payout, fee-contract, order and report legs, with the amounts. */
function legDiffers(d: Pick<DiscrepancyRecord, 'type' | 'values' | 'currency'>): string | null {
  const v = d.values;
  const m = (x: unknown) => {
    const b = bigOf(x);
    return b === null ? '?' : moneyText(b, d.currency);
  };
  const t = (x: unknown) => (x === null || x === undefined || x === '' ? '?' : String(x));
  const ref = (x: unknown) => (x ? ` (bank reference ${String(x)})` : '');
  const days = [v.due_on].flat().map(t).join(', ');
  switch (d.type) {
    case 'settlement_missing':
      return `settlement of ${m(v.expected)} due ${days} not received by ${t(v.deadline)}`;
    case 'settlement_short':
      return `settlement due ${days}: expected ${m(v.expected)}, received ${m(v.received)} on ${t(v.booked_on)}${ref(v.bank_ref)}; short ${m(v.shortfall)}`;
    case 'settlement_late':
      return `settlement due ${days} received on ${t(v.received_on)}, ${t(v.business_days_late)} business day(s) late: ${m(v.received)}${ref(v.bank_ref)}`;
    case 'settlement_unexpected':
      return `bank credit of ${m(v.amount)} on ${t(v.booked_on)} pays no settlement due${ref(v.bank_ref)}`;
    case 'settlement_recovered': {
      const what = `${t(v.written_off_type).replace(/_/g, ' ')} written off for ${m(v.written_off)}`;
      const back = `the write-off is taken back by ${m(v.recovered)}`;
      // no credit paid it: its days are owed again whole (their credit taken back), or the PSP owes less
      if (Array.isArray(v.owed_again_on) && v.owed_again_on.length)
        return `${what}: no money came; settlement day(s) ${v.owed_again_on.map(t).join(', ')} are owed again whole (their credit no longer pays them), so ${m(v.recovered)} of it is now part of what those days miss, in doubt there; ${back}`;
      if (v.paid_on === null || v.paid_on === undefined)
        return `${what}: no money came; the PSP owes ${m(v.recovered)} less than it did (still in doubt ${m(v.still_in_doubt)}); ${back}`;
      return `${what}: ${m(v.recovered)} of it reached the bank since (still in doubt ${m(v.still_in_doubt)}); the write-off is taken back by that much`;
    }
    case 'settlement_gain_taken_back': {
      const now =
        Array.isArray(v.due_on) && v.due_on.length ? `it pays settlement day(s) ${days}` : 'the bank took it back';
      return `bank credit of ${m(v.written_off)} on ${t(v.booked_on)} written off as a gain: ${now}; the gain is taken back by ${m(v.taken_back)}${ref(v.bank_ref)}`;
    }
    case 'payout_missing':
      return `payout ${t(v.reference)} of ${m(v.expected)} due ${t(v.due_on)}: paid ${m(v.paid_out ?? '0')}, returned ${m(v.returned ?? '0')}`;
    case 'payout_amount_mismatch': {
      const e = bigOf(v.expected);
      const p = bigOf(v.paid_out);
      return `payout ${t(v.reference)}: expected ${m(v.expected)}, paid ${m(v.paid_out)}${e !== null && p !== null ? `; difference ${moneyText(p - e, d.currency)}` : ''}`;
    }
    case 'payout_unexpected':
      return `debit of ${m(v.amount)} on ${t(v.booking_date)} to ${t(v.counterparty_name)} pays no expected payout`;
    case 'payout_duplicate':
      return `payout ${t(v.reference)} paid again: ${m(v.amount)} on ${t(v.booking_date)} to ${t(v.counterparty_name)}`;
    case 'payout_returned':
      return `payout ${t(v.reference)} returned: ${m(v.amount)} on ${t(v.booking_date)} (${t(v.remittance)})`;
    case 'fee_above_contract':
    case 'fee_below_contract':
      return `fee on a part of ${m(v.part)}: charged ${m(v.charged_fee)}, contract ${m(v.expected_fee)} (${t(v.percent)} % + ${m(v.fixed)}); difference ${m(v.difference)}`;
    case 'order_not_at_psp':
      return `order of ${m(v.order_amount)} created ${t(v.order_created_at)}: no payment at the PSP after ${t(v.grace_hours)} h`;
    case 'payment_without_order':
      return `PSP payment of ${m(v.psp_amount)} (${t(v.psp_status)}) with no order${v.reason && v.reason !== 'no_order' ? ` (${t(v.reason).replace(/_/g, ' ')})` : ''}`;
    case 'amount_differs_from_order': {
      const c = (x: unknown, currency: unknown) => {
        const b = bigOf(x);
        return b === null ? '?' : moneyText(b, typeof currency === 'string' ? currency : null);
      };
      const diff = bigOf(v.difference) !== null ? `; difference ${c(v.difference, v.order_currency)}` : '';
      return `order ${c(v.order_amount, v.order_currency)}, PSP ${c(v.psp_amount, v.psp_currency)}${diff}`;
    }
    case 'split_differs_from_order': {
      const parts = Array.isArray(v.parts) ? (v.parts as Array<Record<string, unknown>>) : [];
      return `split: ${parts
        .map(
          (p) =>
            `${t(p.receiver_name ?? p.sub_merchant_id)} ordered ${p.order_amount === null ? 'nothing' : m(p.order_amount)}, paid ${p.psp_amount === null ? 'nothing' : m(p.psp_amount)}`,
        )
        .join('; ')}`;
    }
    case 'report_count_mismatch':
      return `register report announced ${t(v.announced_count)} rows, delivered ${t(v.received_count)}`;
    default:
      return null;
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

/** The amounts are the core's (discrepancies/amounts.ts): every leg's rows carry `amount_in_doubt`. */
export { amountInDoubt, discrepancyAmount };

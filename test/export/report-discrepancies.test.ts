import { describe, expect, it } from 'vitest';
import {
  discrepanciesCsv,
  discrepanciesTable,
  discrepancyJson,
  sortDiscrepancies,
  toRecord,
} from '../../src/reconciliation/discrepancy-queries';
import { DISCREPANCY_TYPES, type DiscrepancyRecord } from '../../src/reconciliation/discrepancy-types';

/**
 * `recon discrepancies` tells, for every leg (the PSP's sources, settlements, payouts, the fee contract,
 * orders), the amount at stake and what differs with the figures; an accepted one says who accepted it and
 * why. The values below are those the projections write (as seen in `recon demo`'s database). Settlement,
 * payout and fee-contract discrepancies printed "-" for the amount and their bare type name before.
 */

const source = (amount: string, extra: Record<string, unknown> = {}) => ({
  amount,
  status: 'success',
  currency: 'EUR',
  date_time: '2026-08-02T15:20:31.488Z',
  merchant_fee: '3593',
  ...extra,
});

/** type → [values, an amount the table must show, a part of what differs] */
const CASES: Record<string, [Record<string, unknown>, string, string]> = {
  missing_in_report: [{ period: source('10775'), webhook: source('10775'), register: null }, '107.75 EUR', 'register'],
  missing_in_period: [{ register: source('39911'), webhook: source('39911'), period: null }, '399.11 EUR', 'period'],
  missing_webhook: [{ register: source('40413'), period: source('40413'), webhook: null }, '404.13 EUR', 'webhook'],
  status_mismatch: [
    { register: source('429761'), period: source('429761', { status: 'failure' }), webhook: source('429761') },
    '4,297.61 EUR',
    'period failure',
  ],
  amount_mismatch: [
    { register: source('68454'), period: source('68454'), webhook: source('68704') },
    '687.04 EUR',
    'difference 2.50 EUR',
  ],
  currency_mismatch: [
    { register: source('380212'), period: source('380212', { currency: 'PLN' }), webhook: source('380212') },
    '3,802.12 EUR',
    'period PLN',
  ],
  fee_mismatch: [
    { register: source('185486'), period: source('185486', { merchant_fee: '3693' }), webhook: source('185486') },
    '1,854.86 EUR',
    'difference 1.00 EUR',
  ],
  split_mismatch: [
    { register: source('171832'), shares_sum: '171932', original_amount: '171832' },
    '1,718.32 EUR',
    'difference 1.00 EUR',
  ],
  unknown_sub_merchant: [{ register: source('418071') }, '4,180.71 EUR', 'not in the sub-merchant directory'],
  duplicate: [
    {
      source: 'register',
      rows: [
        { amount: '148411', status: 'success' },
        { amount: '148411', status: 'success' },
      ],
    },
    '1,484.11 EUR',
    'more than once',
  ],
  report_count_mismatch: [{ announced_count: 1031, received_count: 1030 }, '-', 'announced 1031 rows, delivered 1030'],
  payout_missing: [
    { due_on: '2026-11-30', expected: '475219', paid_out: '0', returned: '0', reference: 'RS-HEA53E7407A-2026-08-EUR' },
    '4,752.19 EUR',
    'RS-HEA53E7407A-2026-08-EUR of 4,752.19 EUR due 2026-11-30: paid 0.00 EUR',
  ],
  payout_amount_mismatch: [
    { due_on: '2026-11-30', expected: '100000', paid_out: '90000', reference: 'RS-X' },
    '1,000.00 EUR',
    'expected 1,000.00 EUR, paid 900.00 EUR; difference -100.00 EUR',
  ],
  payout_unexpected: [
    { amount: '12345', booking_date: '2026-12-02', counterparty_name: 'Somebody' },
    '123.45 EUR',
    'debit of 123.45 EUR on 2026-12-02 to Somebody',
  ],
  payout_duplicate: [
    { amount: '42948', reference: 'RS-H6BC', booking_date: '2026-12-01', counterparty_name: 'Northwind Books, Ltd' },
    '429.48 EUR',
    'payout RS-H6BC paid again: 429.48 EUR on 2026-12-01',
  ],
  payout_returned: [
    { amount: '258866', reference: 'RS-HCC2', booking_date: '2026-12-03', remittance: 'RETURN RS-HCC2 ACCOUNT CLOSED' },
    '2,588.66 EUR',
    'payout RS-HCC2 returned: 2,588.66 EUR on 2026-12-03',
  ],
  settlement_missing: [
    { due_on: '2026-01-09', deadline: '2026-01-13', expected: '29700' },
    '297.00 EUR',
    'settlement of 297.00 EUR due 2026-01-09 not received by 2026-01-13',
  ],
  settlement_short: [
    {
      due_on: ['2026-08-21'],
      bank_ref: 'Seab493d1',
      expected: '70496',
      received: '66972',
      booked_on: '2026-08-21',
      shortfall: '3524',
    },
    '704.96 EUR',
    'expected 704.96 EUR, received 669.72 EUR on 2026-08-21 (bank reference Seab493d1); short 35.24 EUR',
  ],
  settlement_late: [
    { due_on: '2026-08-13', bank_ref: 'S03b', received: '234777', received_on: '2026-08-14', business_days_late: 1 },
    '2,347.77 EUR',
    'received on 2026-08-14, 1 business day(s) late',
  ],
  settlement_unexpected: [
    { amount: '777', booked_on: '2026-01-12', bank_ref: 'B3' },
    '7.77 EUR',
    'bank credit of 7.77 EUR on 2026-01-12 pays no settlement',
  ],
  settlement_recovered: [
    {
      written_off_id: '1f0c8a52-3a57-5d8e-9d0f-6a4b1f0b2c11',
      written_off_type: 'settlement_short',
      written_off: '39100',
      recovered: '39100',
      still_in_doubt: '0',
      acceptance: '6b1e0f3c-5d0e-4a44-9f55-2c8f1a7d9e01',
      paid_on: '2026-01-07',
    },
    '391.00 EUR',
    'settlement short written off for 391.00 EUR: 391.00 EUR of it reached the bank since',
  ],
  settlement_gain_taken_back: [
    {
      written_off_id: '2a7d9b63-4b68-5e9f-8e1a-7b5c2a1c3d22',
      written_off: '99100',
      taken_back: '99100',
      still_unexplained: '0',
      acceptance: '7c2f1a4d-6e1f-4b55-8a66-3d9a2b8e0f12',
      due_on: ['2026-01-06'],
      booked_on: '2026-01-06',
      bank_ref: 'B1',
    },
    '991.00 EUR',
    'bank credit of 991.00 EUR on 2026-01-06 written off as a gain: it pays settlement day(s) 2026-01-06; the gain is taken back by 991.00 EUR (bank reference B1)',
  ],
  order_not_at_psp: [
    { grace_hours: 48, order_amount: '4200', order_currency: 'EUR', order_created_at: '2026-08-02T00:00:00.000Z' },
    '42.00 EUR',
    'order of 42.00 EUR created 2026-08-02T00:00:00.000Z: no payment at the PSP after 48 h',
  ],
  payment_without_order: [
    { reason: 'no_order', psp_amount: '273098', psp_status: 'success', psp_currency: 'EUR' },
    '2,730.98 EUR',
    'PSP payment of 2,730.98 EUR (success) with no order',
  ],
  amount_differs_from_order: [
    { order_amount: '10000', order_currency: 'EUR', psp_amount: '10100', psp_currency: 'EUR', difference: '100' },
    '101.00 EUR',
    'order 100.00 EUR, PSP 101.00 EUR; difference 1.00 EUR',
  ],
  split_differs_from_order: [
    {
      parts: [
        { issue: 'part_amount', receiver_name: 'Odesa Garden', order_amount: '111396', psp_amount: '111496' },
        { issue: 'part_amount', receiver_name: 'Kyiv Garden', order_amount: '203502', psp_amount: '203402' },
      ],
      psp_split: [{ amount: '111496' }, { amount: '203402' }],
    },
    '3,148.98 EUR',
    'Odesa Garden ordered 1,113.96 EUR, paid 1,114.96 EUR; Kyiv Garden ordered 2,035.02 EUR, paid 2,034.02 EUR',
  ],
  fee_above_contract: [
    { part: '27562', fixed: '24', percent: '2.9', difference: '1', charged_fee: '824', expected_fee: '823' },
    '275.62 EUR',
    'charged 8.24 EUR, contract 8.23 EUR (2.9 % + 0.24 EUR); difference 0.01 EUR',
  ],
  fee_below_contract: [
    { part: '161431', fixed: '0', percent: '2', difference: '-2', charged_fee: '3226', expected_fee: '3228' },
    '1,614.31 EUR',
    'charged 32.26 EUR, contract 32.28 EUR (2 % + 0.00 EUR); difference -0.02 EUR',
  ],
};

function record(type: string, values: Record<string, unknown>, extra: Partial<DiscrepancyRecord> = {}) {
  return toRecord({
    id: `00000000-0000-5000-8000-${String(DISCREPANCY_TYPES.indexOf(type as never)).padStart(12, '0')}`,
    type,
    status: 'open',
    pos_id: type === 'order_not_at_psp' ? null : 'pos-1',
    order_id: null,
    payment_id: null,
    method: null,
    operation_key: `key-${type}`,
    receiver_name: null,
    sub_merchant_id: null,
    sub_merchant_ids: [],
    currency: 'EUR',
    values,
    evidence: [],
    occurred_at: new Date('2026-08-02T15:20:31.488Z'),
    detected_at: new Date('2026-11-27T12:00:00.000Z'),
    detected_by_event: '00000000-0000-5000-8000-000000000000',
    resolved_at: null,
    resolved_by_event: null,
    accepted_at: null,
    accepted_by: null,
    accepted_note: null,
    accepted_by_event: null,
    ...extra,
  });
}

/** The table's row of one discrepancy, split into its cells (two spaces or more between them). */
const rowOf = (table: string, id: string) =>
  table
    .split('\n')
    .find((l) => l.endsWith(id))!
    .trim()
    .split(/\s{2,}/);

describe('recon discrepancies: the amount and what differs on every leg', () => {
  it('has a case for every type recon knows', () => {
    expect(Object.keys(CASES).sort()).toEqual([...DISCREPANCY_TYPES].sort());
  });

  it.each(Object.entries(CASES))('%s', (type, [values, amount, differs]) => {
    const d = record(type, values);
    const table = discrepanciesTable([d]);
    const cells = rowOf(table, d.id);
    expect(cells[0]).toBe(amount);
    expect(table).toContain(differs);
    // never the bare type name in words: the figures are there
    expect(discrepancyJson(d).what_differs).not.toBe(type.replace(/_/g, ' '));
    expect(discrepanciesCsv([d])).toContain(differs.replace(/"/g, '""'));
  });

  it('sorting by amount ranks the settlement, payout and fee legs by their money too', () => {
    const rows = ['settlement_short', 'payout_missing', 'fee_below_contract', 'settlement_unexpected'].map((t) =>
      record(t, CASES[t]![0]),
    );
    expect(sortDiscrepancies(rows, 'amount').map((r) => r.type)).toEqual([
      'payout_missing',
      'fee_below_contract',
      'settlement_short',
      'settlement_unexpected',
    ]);
  });

  it('an accepted one says who accepted it and why; the others leave that cell empty', () => {
    const accepted = record('fee_below_contract', CASES['fee_below_contract']![0], {
      status: 'accepted',
      accepted_at: '2026-11-28T09:00:00.000Z',
      accepted_by: 'Olena Koval',
      accepted_note: 'rounding agreed with the PSP',
    } as Partial<DiscrepancyRecord>);
    const open = record('settlement_short', CASES['settlement_short']![0]);
    const table = discrepanciesTable([accepted, open]);
    expect(table.split('\n')[0]).toContain('accepted by: why');
    expect(rowOf(table, accepted.id)).toContain('Olena Koval: rounding agreed with the PSP');
    expect(rowOf(table, open.id)).not.toContain('Olena Koval: rounding agreed with the PSP');
  });

  it('JSON gives a missing POS as null, not the string "null"', () => {
    const d = record('order_not_at_psp', CASES['order_not_at_psp']![0]);
    const json = JSON.parse(JSON.stringify(discrepancyJson(d))) as Record<string, unknown>;
    expect(json['pos_id']).toBeNull();
    expect(discrepancyJson(record('settlement_short', CASES['settlement_short']![0])).pos_id).toBe('pos-1');
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { currencyDecimals } from '../../src/money';
import { expectedFee } from '../../src/order-terms';
import { decimalText } from '../../src/payout-runs/pain001';
import { encodeBase64Url, sign } from '../../src/psp/signature';
import { eventsSince, send, storeMark, useReceiver } from '../bad-input/http';
import { formBody, payload, POS_A, SECRET_A } from '../bad-input/webhooks.cases';

/**
 * Review 15: a currency's decimals came from Node's ICU (CLDR display digits), not from ISO 4217. On ICU 78 that is
 * 0 for HUF, COP, IDR, PKR, LBP, ALL (ISO: 2) and 0 for IQD (ISO: 3), so the PSP's "1234.50" HUF was refused at the
 * webhook door as "not a whole number of HUF's smallest unit", a HUF payable of 1,234.50 left out of its payout run
 * (`not_whole_units`), a contract's percentage fee rounded to a whole forint (a fee_above_contract of 0.35 HUF held),
 * and every answer could change with the Node version a replay runs on. Decimals now come from a table of the ISO
 * list in src/money.ts.
 */

const fx = useReceiver();

/** A webhook as the PSP signs it, for a payment in `currency` (amounts as JSON numbers, as the PSP writes them). */
function delivery(currency: string, amount: string, fee: string) {
  const p = payload({
    currency: JSON.stringify(currency),
    amount,
    fee: `{"amount": ${fee}, "currency": "${currency}"}`,
  });
  const data = encodeBase64Url(p.text);
  const body = formBody([
    ['data', data],
    ['signature', sign(SECRET_A, data)],
  ]);
  return { path: `/webhooks/${POS_A}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body };
}

async function deliver(currency: string, amount: string, fee: string) {
  const mark = await storeMark(fx.db.sql);
  const answer = await send(fx.port, delivery(currency, amount, fee));
  const stored = await eventsSince(fx.db.sql, mark);
  return { status: answer.status, error: answer.error, types: stored.map((e) => e.type) };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('review15: currency decimals are ISO 4217, not ICU display digits', () => {
  it('takes a webhook of 1234.50 HUF (fee 12.35) and of 10.05 IQD, as the PSP sends them', async () => {
    for (const [currency, amount, fee] of [
      ['HUF', '1234.5', '12.35'],
      ['COP', '52000.75', '1.05'],
      ['IQD', '10.05', '0.25'],
    ] as const) {
      const got = await deliver(currency, amount, fee);
      expect({ currency, ...got }).toEqual({ currency, status: 200, error: '', types: ['WebhookReceived'] });
    }
  });

  it('still refuses a fraction of a yen at the same door, naming the field', async () => {
    const got = await deliver('JPY', '1000.5', '25');
    expect(got.status).toBe(400);
    expect(got.error).toMatch(/JPY has 0 decimals/);
    expect(got.types).toEqual(['SourceRecordRejected']);
  });

  it('writes a HUF or IQD payout in its ISO decimals in pain.001, never leaving it out', () => {
    expect(decimalText(123_450n, 'HUF')).toBe('1234.50');
    expect(decimalText(100n, 'PKR')).toBe('1.00');
    expect(decimalText(1_005n, 'IQD')).toBe('10.050');
    expect(decimalText(12_345n, 'CLF')).toBe('123.4500');
    expect(decimalText(12_350n, 'ISK')).toBeNull();
  });

  it("rounds a contract's percentage fee to a hundredth of a forint, to a whole yen", () => {
    const line = { percent: '1', fixed: '0', rounding: 'half_up' as const };
    // 1 % of 1,234.50 HUF is 12.345: 12.35, as the PSP charges it (not 12.00)
    expect(expectedFee({ ...line, currency: 'HUF' }, 123_450n)).toBe(1_235n);
    expect(expectedFee({ ...line, currency: 'JPY' }, 123_400n)).toBe(1_200n);
  });

  it('does not ask the ICU of the Node it runs on (a replay elsewhere gives the same answers)', () => {
    const icu = vi.spyOn(Intl, 'NumberFormat');
    expect(['HUF', 'IDR', 'ALL', 'LBP', 'IQD', 'JPY', 'KWD', 'UYW', 'UAH'].map(currencyDecimals)).toEqual([
      2, 2, 2, 2, 3, 0, 3, 4, 2,
    ]);
    // outside the list (a code the PSP may still send, a code with no minor unit): the PSP's two decimals
    expect(['BGN', 'XAU', 'ZZZ'].map(currencyDecimals)).toEqual([2, 2, 2]);
    expect(icu).not.toHaveBeenCalled();
  });
});

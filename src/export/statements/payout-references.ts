import { sha256Hex } from '../../canonical';

/**
 * The statement number finance writes in a payout's remittance text: `RS-<sub-merchant>-<YYYY-MM>-<currency>`,
 * with `-<n>` for the n-th run of the month that asks this sub-merchant for money again (n ≥ 2). Upper-case
 * letters, digits and '-' only, at most 35 characters (a SEPA end-to-end id), so every bank keeps it whole. An
 * id that is not short upper-case letters, digits and '-' is written `H` + the first 10 hex digits of its sha-256.
 */
export function payoutReference(subMerchantId: string, month: string, currency: string, run: number): string {
  const id = /^[A-Z0-9-]{1,16}$/.test(subMerchantId)
    ? subMerchantId
    : `H${sha256Hex(subMerchantId).slice(0, 10).toUpperCase()}`;
  const base = `RS-${id}-${month}-${currency}`;
  return run > 1 ? `${base}-${run}` : base;
}

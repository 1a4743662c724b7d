import { type BankChargeCodes, DEFAULT_BANK_CHARGES } from '../config/bank';

/**
 * Whether a bank line is the bank's own charge (docs/bank.md, "Bank charges"), from the transaction code the
 * import carried onto its `BankEntryBooked` (src/ingest/bank): a camt.053 `BkTxCd` written
 * `domain/family/sub-family` whose sub-family is a charge one (ACMT/MDOP/CHRG, PMNT/ICDT/CHRG, ...); an MT940
 * `:61:` type (`NCHG`) or, when the `:86:` is in the German structured form, its business transaction code
 * (GVC 805, 808, ...); or a code of any format listed exactly (a proprietary camt code, a CSV column's value).
 * A charge is booked as a bank fee and never matched as a settlement or a payout.
 */
export function isBankCharge(code: string | null | undefined, rules: BankChargeCodes = DEFAULT_BANK_CHARGES): boolean {
  if (!code) return false;
  const c = code.trim().toUpperCase();
  if (c === '') return false;
  if (rules.codes.includes(c)) return true;
  const parts = c.split('/');
  if (parts.length === 3) return rules.camtSubFamilies.includes(parts[2]!);
  if (/^\d{3}$/.test(c)) return rules.gvc.includes(c);
  if (/^[NSF][A-Z0-9]{3}$/.test(c)) return rules.mt940Types.includes(c);
  return false;
}

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

/** What `foldedChargeOf` reads of a `BankEntryBooked`. */
export interface ChargedLine {
  readonly direction: 'credit' | 'debit';
  readonly amount: string;
  readonly currency: string;
  readonly transactionCode: string | null;
  readonly transactionAmount?: string | null;
  readonly charges?: ReadonlyArray<{
    readonly amount: string;
    readonly currency: string | null;
    readonly direction: 'credit' | 'debit' | null;
    readonly included: boolean | null;
  }>;
}

/**
 * The bank's charge folded into a debit (docs/bank.md, "A charge folded into a transfer"): a line of one
 * transaction detail whose file states the transfer's own amount (camt `TxAmt`) and charges (`Chrgs`), where
 * the transfer plus the charges included in the debit (`ChrgInclInd` not false) make the line's amount
 * exactly. Returns that charge (the line then pays `amount − charge` and the charge is a bank fee), else 0:
 * a charge in another currency than the line's, a charge stated as a credit, charges that do not add up, a
 * credit, a line that is a charge itself, or a line whose file states nothing leave the line whole, for a
 * person to judge (the payouts leg reads what it paid as it is).
 */
export function foldedChargeOf(line: ChargedLine, rules: BankChargeCodes = DEFAULT_BANK_CHARGES): bigint {
  if (line.direction !== 'debit') return 0n;
  const included = includedCharges(line, rules);
  return included > 0n && BigInt(line.transactionAmount!) + included === BigInt(line.amount) ? included : 0n;
}

/**
 * The bank's charge deducted from a credit (docs/bank.md, "A charge deducted from a settlement credit"), the
 * mirror of `foldedChargeOf`: a credit of one transaction detail whose file states the transfer's own amount
 * (camt `TxAmt`, MT940 `/OCMT/`) and charges (`Chrgs`, `/CHGS/`), where the transfer less the charges included
 * makes the line's amount exactly. Returns that charge (the credit then pays `amount + charge`, what the payer
 * sent, and the charge is a bank fee), else 0, on the same conditions as a folded charge; a credit marked as a
 * return (one of our own debits given back) is left whole.
 */
export function deductedChargeOf(
  line: ChargedLine & { readonly isReturn?: boolean },
  rules: BankChargeCodes = DEFAULT_BANK_CHARGES,
): bigint {
  if (line.direction !== 'credit' || line.isReturn) return 0n;
  const included = includedCharges(line, rules);
  return included > 0n && BigInt(line.transactionAmount!) - included === BigInt(line.amount) ? included : 0n;
}

/**
 * The charges a line states as included in it, all in its currency and none stated as a credit (one billed
 * apart, `ChrgInclInd` false, left out); 0 when it states no transfer amount or charges, is a charge line
 * itself, or one charge is in another currency or stated as a credit.
 */
function includedCharges(line: ChargedLine, rules: BankChargeCodes): bigint {
  const { charges, transactionAmount } = line;
  if (!charges?.length || transactionAmount == null) return 0n;
  if (isBankCharge(line.transactionCode, rules)) return 0n;
  let included = 0n;
  for (const c of charges) {
    if (c.included === false) continue;
    if (c.currency !== line.currency || c.direction === 'credit') return 0n;
    included += BigInt(c.amount);
  }
  return included;
}

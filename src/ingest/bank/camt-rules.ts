import { FREE_TEXT, NAME_TEXT, REFERENCE_TEXT, type TextPolicy } from '../../input-rules';

/** What the camt.053 reader (camt053.ts) accepts: versions, bounds and the text policy of each element kept. */

/** Deeper than any camt.053 (about 12 levels): a deeper file is refused before its depth costs memory. */
export const MAX_DEPTH = 64;
/** The longest text, comment or CDATA section read whole (a remittance line is at most 140 characters). */
export const MAX_TEXT = 65_536;
/** Transaction details of one entry (a batch booking): the entry is held whole until its end. */
export const MAX_DETAILS = 100_000;
/** Charges stated in one entry, its details' included (`Chrgs/Rcrd`): a transfer has a handful. */
export const MAX_CHARGES = 1_000;

/** ISO 20022 camt.053.001.02 to camt.053.001.13: the versions whose elements this reader knows. */
export const SUPPORTED_NAMESPACE = /^urn:iso:std:iso:20022:tech:xsd:camt\.053\.001\.(0[2-9]|1[0-3])$/;

/** The text policy of each element kept (docs/bank.md, "Text fields"); a name: one line, no bidi overrides. */
export const FIELD_POLICY: Record<string, TextPolicy> = {
  'Stmt/Id': REFERENCE_TEXT,
  'Stmt/Acct/Id/IBAN': REFERENCE_TEXT,
  'Stmt/Acct/Id/Othr/Id': REFERENCE_TEXT,
  'Stmt/Ntry/AcctSvcrRef': REFERENCE_TEXT,
  'Stmt/Ntry/BkTxCd/Domn/Cd': REFERENCE_TEXT,
  'Stmt/Ntry/BkTxCd/Domn/Fmly/Cd': REFERENCE_TEXT,
  'Stmt/Ntry/BkTxCd/Domn/Fmly/SubFmlyCd': REFERENCE_TEXT,
  'Stmt/Ntry/BkTxCd/Prtry/Cd': REFERENCE_TEXT,
  'Stmt/Ntry/AddtlNtryInf': FREE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/Refs/EndToEndId': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/Refs/AcctSvcrRef': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RmtInf/Ustrd': FREE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RmtInf/Strd/CdtrRefInf/Ref': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Dbtr/Nm': NAME_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Dbtr/Pty/Nm': NAME_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Cdtr/Nm': NAME_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/Cdtr/Pty/Nm': NAME_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/DbtrAcct/Id/IBAN': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/DbtrAcct/Id/Othr/Id': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/CdtrAcct/Id/IBAN': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/RltdPties/CdtrAcct/Id/Othr/Id': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Domn/Cd': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Domn/Fmly/Cd': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Domn/Fmly/SubFmlyCd': REFERENCE_TEXT,
  'Stmt/Ntry/NtryDtls/TxDtls/BkTxCd/Prtry/Cd': REFERENCE_TEXT,
};

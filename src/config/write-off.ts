/**
 * The journal account write-offs are booked to (docs/ledger.md, "Write-offs"): RECON_CONFIG's
 * `exceptions.writeOff.account`, by default `expense:write-offs` (the exceptions policy's default,
 * src/exceptions/severity.ts). It is recorded on the acceptance, so changing it changes the account of later
 * write-offs only: a replay books every write-off where it was booked.
 */
export const DEFAULT_WRITE_OFF_ACCOUNT = 'expense:write-offs';

/** The journal's own accounts (src/journal-rules.ts, docs/ledger.md): a write-off account is none of them. */
const RESERVED = ['psp_clearing', 'psp_fees', 'payable', 'reserve', 'marketplace', 'bank_fees'];

/** Why a name cannot be the write-off account, or null when it can. */
export function writeOffAccountProblem(name: string): string | null {
  if (!/^[a-z][a-z0-9_.:-]{0,99}$/.test(name))
    return `expected lower-case letters, digits and _ . : - (at most 100, a letter first), got ${JSON.stringify(name)}`;
  if (RESERVED.includes(name) || name.startsWith('bank:'))
    return `${name} is one of the journal's own accounts: a write-off needs an account of its own`;
  return null;
}

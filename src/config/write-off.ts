/**
 * The journal account write-offs are booked to (docs/ledger.md, "Write-offs"): `RECON_WRITE_OFF_ACCOUNT`, by
 * default `expense:write-offs` (the exceptions policy's default, src/exceptions/severity.ts). It is read when a
 * write-off is accepted and recorded on the acceptance, so changing it changes the account of later write-offs
 * only: a replay books every write-off where it was booked.
 */
export const DEFAULT_WRITE_OFF_ACCOUNT = 'expense:write-offs';

/** The journal's own accounts (src/journal-rules.ts, docs/ledger.md): a write-off account is none of them. */
const RESERVED = ['psp_clearing', 'psp_fees', 'payable', 'reserve', 'marketplace', 'bank_fees'];

export const WRITE_OFF_VARIABLE = {
  name: 'RECON_WRITE_OFF_ACCOUNT',
  default: DEFAULT_WRITE_OFF_ACCOUNT,
  example: 'expense:bad-debts',
  meaning: 'the journal account an accepted write-off is booked to (an expense)',
} as const;

/** Why a name cannot be the write-off account, or null when it can. */
export function writeOffAccountProblem(name: string): string | null {
  if (!/^[a-z][a-z0-9_.:-]{0,99}$/.test(name))
    return `expected lower-case letters, digits and _ . : - (at most 100, a letter first), got ${JSON.stringify(name)}`;
  if (RESERVED.includes(name) || name.startsWith('bank:'))
    return `${name} is one of the journal's own accounts: a write-off needs an account of its own`;
  return null;
}

/** The write-off account of an environment (unset or empty: the default); a bad one is an error naming the variable. */
export function writeOffAccountFrom(env: Readonly<Record<string, string | undefined>>): string {
  const name = env.RECON_WRITE_OFF_ACCOUNT?.trim() || DEFAULT_WRITE_OFF_ACCOUNT;
  const problem = writeOffAccountProblem(name);
  if (problem) throw new RangeError(`RECON_WRITE_OFF_ACCOUNT: ${problem}`);
  return name;
}

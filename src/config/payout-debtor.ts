/** The variables naming who pays the payout runs' transfers (src/payout-runs/debtor.ts reads them), for `recon config`. */
export const DEBTOR_VARIABLES = [
  {
    name: 'RECON_PAYOUTS_DEBTOR_NAME',
    default: '(unset: RECON_ISSUER_NAME)',
    example: 'Marketplace LLC',
    meaning: 'the holder of the payouts accounts, as the payment file (pain.001) names the debtor',
  },
  {
    name: 'RECON_PAYOUTS_DEBTOR_BIC',
    default: '(unset: NOTPROVIDED in the file)',
    example: 'COBADEFFXXX',
    meaning: "the BIC of the payouts accounts' bank, in the payment file",
  },
] as const;

/** A BIC (ISO 9362): bank, country, location, and an optional branch. */
export const DEBTOR_BIC = /^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;

/** Why a name cannot be the payment file's debtor (pain.001 `Nm`, at most 140), or null when it can. */
export function debtorNameProblem(name: string): string | null {
  return /[\u0000-\u001f\u007f]/.test(name) || [...name].length > 140
    ? 'at most 140 characters and no control characters'
    : null;
}

/** Why a BIC (trimmed, upper-cased) cannot be the debtor's bank, or null when it can. */
export function debtorBicProblem(bic: string): string | null {
  return DEBTOR_BIC.test(bic)
    ? null
    : `expected a BIC of 8 or 11 letters and digits (e.g. COBADEFFXXX), got ${JSON.stringify(bic.slice(0, 20))}`;
}

/**
 * The debtor variables' problems, checked with the others at start so that a bad value is named by `recon config`,
 * not first by the payout run drafted with it (src/payout-runs/debtor.ts refuses it there too). With a payouts
 * account configured and RECON_PAYOUTS_DEBTOR_NAME unset, RECON_ISSUER_NAME is the debtor: a statement takes 200
 * characters, a payment file 140, so its problem is named here, with the way out.
 */
export function debtorIssues(
  env: NodeJS.ProcessEnv,
  payoutsAccount = false,
): Array<{ variable: string; problem: string }> {
  const out: Array<{ variable: string; problem: string }> = [];
  const own = env.RECON_PAYOUTS_DEBTOR_NAME?.trim();
  const issuer = payoutsAccount && !own ? env.RECON_ISSUER_NAME?.trim() : undefined;
  const name = own || issuer;
  const nameProblem = name ? debtorNameProblem(name) : null;
  if (nameProblem && own) out.push({ variable: 'RECON_PAYOUTS_DEBTOR_NAME', problem: nameProblem });
  else if (nameProblem)
    out.push({
      variable: 'RECON_ISSUER_NAME',
      problem: `names the payment file's debtor while RECON_PAYOUTS_DEBTOR_NAME is unset: ${nameProblem} there (set RECON_PAYOUTS_DEBTOR_NAME to the payouts account holder's name)`,
    });
  const bic = env.RECON_PAYOUTS_DEBTOR_BIC?.trim().toUpperCase();
  const bicProblem = bic ? debtorBicProblem(bic) : null;
  if (bicProblem) out.push({ variable: 'RECON_PAYOUTS_DEBTOR_BIC', problem: bicProblem });
  return out;
}

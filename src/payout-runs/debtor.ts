import type { BankConfig } from '../config/bank';
import { debtorBicProblem, debtorNameProblem } from '../config/payout-debtor';
import { PayoutConfigMissing } from './errors';
import { partyNameIn } from './charset';
import type { Debtor } from './pain001';

/**
 * Whom the payment file pays from (docs/exceptions.md, "Payout runs"): per currency, the bank account configured
 * with role `payouts` in that currency (`bank.accounts` of RECON_CONFIG), held by RECON_PAYOUTS_DEBTOR_NAME (the
 * account holder's legal name as the bank knows it; unset: RECON_ISSUER_NAME, the name the statements print),
 * at the bank RECON_PAYOUTS_DEBTOR_BIC (optional: without it the file says NOTPROVIDED, which banks that take
 * the file from their own customer accept). Read when a run is drafted and recorded with it, so the file of a
 * run never changes with the environment of the machine that writes it.
 */

function debtorName(env: NodeJS.ProcessEnv): { name: string; variable: string } {
  const own = env.RECON_PAYOUTS_DEBTOR_NAME?.trim();
  const name = own || env.RECON_ISSUER_NAME?.trim();
  if (!name)
    throw new PayoutConfigMissing(
      'RECON_PAYOUTS_DEBTOR_NAME: not set (nor RECON_ISSUER_NAME); the payment file must name the holder of the payouts account',
    );
  const variable = own ? 'RECON_PAYOUTS_DEBTOR_NAME' : 'RECON_ISSUER_NAME';
  const problem = debtorNameProblem(name);
  if (problem) throw new PayoutConfigMissing(`${variable}: ${problem}`);
  return { name, variable };
}

function debtorBic(env: NodeJS.ProcessEnv): string | null {
  const bic = env.RECON_PAYOUTS_DEBTOR_BIC?.trim().toUpperCase();
  if (!bic) return null;
  const problem = debtorBicProblem(bic);
  if (problem) throw new PayoutConfigMissing(`RECON_PAYOUTS_DEBTOR_BIC: ${problem}`);
  return bic;
}

/** The debtor of each currency, sorted; refused naming what to configure when a currency has no or two accounts. */
export function debtorsFor(currencies: readonly string[], bank: BankConfig, env: NodeJS.ProcessEnv): Debtor[] {
  if (currencies.length === 0) return [];
  // recorded as the file names it (at most 70 characters, no pictographs, in the bank's character set: charset.ts)
  const given = debtorName(env);
  const charset = bank.payouts.charset ?? 'utf8';
  const name = partyNameIn(given.name, charset);
  if (name === null)
    throw new PayoutConfigMissing(
      `${given.variable}: has characters the payment file's character set (bank.payouts.charset "${charset}") cannot write; set RECON_PAYOUTS_DEBTOR_NAME to the account holder's name in Latin letters as the bank knows it`,
    );
  if (!name)
    throw new PayoutConfigMissing(
      'RECON_PAYOUTS_DEBTOR_NAME: no character a bank takes in a name (the legal name of the payouts account holder)',
    );
  const bic = debtorBic(env);
  return [...new Set(currencies)].sort().map((currency) => {
    const accounts = bank.accounts.filter((a) => a.role === 'payouts' && a.currency === currency);
    if (accounts.length === 0)
      throw new PayoutConfigMissing(
        `bank.accounts (RECON_CONFIG): no account with role "payouts" in ${currency}; the payment file pays ${currency} from it`,
      );
    if (accounts.length > 1)
      throw new PayoutConfigMissing(
        `bank.accounts (RECON_CONFIG): ${accounts.length} accounts with role "payouts" in ${currency} (${accounts.map((a) => a.id).join(', ')}); keep one per currency for payment files`,
      );
    const account = accounts[0]!.id;
    if (!/^[A-Z0-9/-]{1,34}$/.test(account))
      throw new PayoutConfigMissing(
        `bank.accounts (RECON_CONFIG): the payouts account ${JSON.stringify(account.slice(0, 40))} is not an IBAN or account number a payment file can carry (letters, digits, / and -, at most 34)`,
      );
    return { currency, account, name, bic };
  });
}

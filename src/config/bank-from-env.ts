import { type BankConfig, EMPTY_BANK_CONFIG } from './bank';
import { loadConfig } from './env';

let configured: BankConfig | undefined;

/**
 * The bank configuration of RECON_CONFIG, read once, for code that is not handed the runtime's config (a
 * projection file, the statements' payout figures). None, or a configuration the CLI would refuse anyway:
 * no bank accounts and the default days.
 */
export function bankConfigFromEnv(): BankConfig {
  if (!configured) {
    const r = loadConfig(process.env);
    configured = r.ok ? r.config.bank : EMPTY_BANK_CONFIG;
  }
  return configured;
}

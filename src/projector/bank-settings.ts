import { DEFAULT_BANK_CHARGES, EMPTY_BANK_CONFIG, type BankConfig } from '../config/bank';
import { stableStringify } from '../canonical';

/**
 * The bank settings a build records (projection_builds.bank_settings, migration 1700): canonical JSON of
 * the configuration (tolerances as decimal strings), so that equal settings give equal text.
 */

export function bankSettingsText(bank: BankConfig | undefined): string {
  const b = bank ?? EMPTY_BANK_CONFIG;
  // the payouts bank's holidays and character set only shape payout runs (src/payout-runs/): no read model
  // reads them, so setting them rebuilds nothing
  const { holidays: _, charset: __, ...payouts } = b.payouts;
  return stableStringify({ ...b, payouts });
}

const decoded = new Map<string, BankConfig>();

export function bankSettingsOf(text: string): BankConfig {
  let b = decoded.get(text);
  if (!b) {
    const raw = JSON.parse(text) as Omit<BankConfig, 'settlement'> & {
      settlement: Omit<BankConfig['settlement'], 'tolerance'> & { tolerance: Record<string, string> };
    };
    b = {
      ...raw,
      // a build recorded before charge codes were configurable read the defaults
      charges: raw.charges ?? DEFAULT_BANK_CHARGES,
      settlement: {
        ...raw.settlement,
        tolerance: Object.fromEntries(Object.entries(raw.settlement.tolerance).map(([c, v]) => [c, BigInt(v)])),
      },
    };
    if (decoded.size > 100) decoded.clear();
    decoded.set(text, b);
  }
  return b;
}

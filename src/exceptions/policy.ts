import type { ExceptionsConfig } from '../config/exceptions';
import { DEFAULT_EXCEPTION_POLICY, type ExceptionPolicy } from './severity';

/**
 * The policy in force: RECON_CONFIG's `exceptions` section (src/config/exceptions.ts) over the defaults, with
 * the problems of the result (thresholds out of order) named by field.
 */
export function exceptionPolicyOf(c: ExceptionsConfig = {}): { policy: ExceptionPolicy; issues: string[] } {
  const d = DEFAULT_EXCEPTION_POLICY;
  const policy: ExceptionPolicy = {
    amountAtLeast: { ...d.amountAtLeast, ...c.amountAtLeast },
    // a currency's own thresholds: what it leaves out is the default's (amountAtLeast as configured)
    amountAtLeastByCurrency: Object.fromEntries(
      Object.entries(c.amountAtLeastByCurrency ?? {}).map(([cur, t]) => [
        cur,
        { ...d.amountAtLeast, ...c.amountAtLeast, ...t },
      ]),
    ),
    ageHoursAtLeast: { ...d.ageHoursAtLeast, ...c.ageHoursAtLeast },
    slaHours: { ...d.slaHours, ...c.slaHours },
    writeOff: { ...d.writeOff, ...c.writeOff },
    pay: { ...d.pay, ...c.pay },
  };
  const issues: string[] = [];
  const a = policy.amountAtLeast;
  if (!(a.medium <= a.high && a.high <= a.critical))
    issues.push('exceptions.amountAtLeast: expected medium ≤ high ≤ critical');
  for (const [cur, t] of Object.entries(policy.amountAtLeastByCurrency ?? {}))
    if (!(t.medium <= t.high && t.high <= t.critical))
      issues.push(`exceptions.amountAtLeastByCurrency.${cur}: expected medium ≤ high ≤ critical`);
  const h = policy.ageHoursAtLeast;
  if (!(h.medium <= h.high && h.high <= h.critical))
    issues.push('exceptions.ageHoursAtLeast: expected medium ≤ high ≤ critical');
  return { policy, issues };
}

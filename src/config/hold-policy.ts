/**
 * The hold policy (docs/discrepancies.md, "What is held"): for each discrepancy type, whether an open one
 * holds money on the statements, and how much is in doubt. A leaf of src/config (it reads only the registry
 * of types) so that recon's holds (src/export/payouts/holds.ts) and the sandbox's ground truth
 * (src/sandbox/ground-truth.ts) read the same table; each computes the amount on its own.
 *
 *   payment     the payment's whole net contribution is in doubt (its amount, currency or owner is)
 *   difference  only the difference the discrepancy states is in doubt (a fee), capped at the payment's
 *               net contribution, and nothing when it is below the currency's materiality
 *   none        no money is in doubt (a lost notification, a report's count, the bank's side of a payout)
 */

import { DISCREPANCY_TYPES, entryOf, HOLD_RULES, type HoldRule } from '../reconciliation/discrepancies/registry';

export { HOLD_RULES, type HoldRule };

/**
 * The default table: every discrepancy type recon knows, by its registry entry's hold rule
 * (src/reconciliation/discrepancies/registry.ts; test/payouts/holds-policy.test.ts checks it is all).
 */
export const DEFAULT_HOLD_RULES: Readonly<Record<string, HoldRule>> = Object.fromEntries(
  DISCREPANCY_TYPES.map((t) => [t, entryOf(t).hold.rule]),
);

/** Below this (minor units) a difference is not held: 1.00 of any currency unless configured. */
export const DEFAULT_MATERIALITY = 100n;

export interface HoldPolicy {
  readonly rules: Readonly<Record<string, HoldRule>>;
  readonly materiality: { readonly all: bigint; readonly byCurrency: Readonly<Record<string, bigint>> };
}

export const DEFAULT_HOLD_POLICY: HoldPolicy = {
  rules: DEFAULT_HOLD_RULES,
  materiality: { all: DEFAULT_MATERIALITY, byCurrency: {} },
};

/** The rule of a type; a type the table does not name holds nothing. */
export const holdRuleOf = (policy: HoldPolicy, type: string): HoldRule => policy.rules[type] ?? 'none';

export const materialityOf = (policy: HoldPolicy, currency: string): bigint =>
  policy.materiality.byCurrency[currency] ?? policy.materiality.all;

/** Whether an open discrepancy of the type holds money on the statements under a policy. */
export const holdsMoneyUnder = (policy: HoldPolicy, type: string): boolean => holdRuleOf(policy, type) !== 'none';

/** The types whose discrepancies hold money under a policy. */
export const holdingTypesOf = (policy: HoldPolicy): string[] =>
  Object.entries(policy.rules)
    .filter(([, r]) => r !== 'none')
    .map(([t]) => t)
    .sort();

export const HOLD_POLICY_VARIABLES = [
  {
    name: 'RECON_HOLD_POLICY',
    default: '(the table in docs/discrepancies.md)',
    example: 'fee_mismatch=none,missing_webhook=payment',
    meaning: 'per discrepancy type, what an open one holds on the statements: payment, difference or none',
  },
  {
    name: 'RECON_HOLD_MATERIALITY',
    default: '100 (1.00 of any currency)',
    example: '100,UAH=5000',
    meaning: 'minor units below which a difference (a fee) is not held: one for all currencies, or CUR=n each',
  },
] as const;

const MINOR = /^\d{1,15}$/;

/**
 * The policy of an environment (or a project file's `holds` section, given in the same text form): every bad
 * entry named by its variable. Unset or empty: the defaults.
 */
export function holdPolicyFrom(
  env: Readonly<Record<string, string | undefined>>,
  knownTypes: readonly string[] = Object.keys(DEFAULT_HOLD_RULES),
): { policy: HoldPolicy; issues: Array<{ variable: string; problem: string }> } {
  const issues: Array<{ variable: string; problem: string }> = [];
  const rules: Record<string, HoldRule> = { ...DEFAULT_HOLD_RULES };
  // a type or currency named twice is refused, not the last one taken: which was meant cannot be known
  const seen = new Set<string>();
  const twice = (variable: string, key: string, what: string): boolean => {
    const k = `${variable}\u0000${key}`;
    if (!seen.has(k)) {
      seen.add(k);
      return false;
    }
    issues.push({ variable, problem: `${what} given twice` });
    return true;
  };
  for (const part of splitList(env.RECON_HOLD_POLICY)) {
    const [type, rule, ...more] = part.split('=').map((s) => s.trim());
    if (more.length > 0)
      issues.push({ variable: 'RECON_HOLD_POLICY', problem: `expected TYPE=RULE, got ${JSON.stringify(part)}` });
    else if (!type || !knownTypes.includes(type))
      issues.push({ variable: 'RECON_HOLD_POLICY', problem: `unknown discrepancy type ${JSON.stringify(type)}` });
    else if (!(HOLD_RULES as readonly string[]).includes(rule ?? ''))
      issues.push({
        variable: 'RECON_HOLD_POLICY',
        problem: `${type}: expected payment, difference or none, got ${JSON.stringify(rule ?? '')}`,
      });
    else if (!twice('RECON_HOLD_POLICY', type, type)) rules[type] = rule as HoldRule;
  }
  let all = DEFAULT_MATERIALITY;
  const byCurrency: Record<string, bigint> = {};
  for (const part of splitList(env.RECON_HOLD_MATERIALITY)) {
    const [a, b, ...more] = part.split('=').map((s) => s.trim());
    const [currency, value] = b === undefined ? [undefined, a] : [a, b];
    if (more.length > 0)
      issues.push({ variable: 'RECON_HOLD_MATERIALITY', problem: `expected CUR=n, got ${JSON.stringify(part)}` });
    else if (currency !== undefined && !/^[A-Z]{3}$/.test(currency))
      issues.push({
        variable: 'RECON_HOLD_MATERIALITY',
        problem: `expected a currency code, got ${JSON.stringify(currency)}`,
      });
    else if (!MINOR.test(value ?? ''))
      issues.push({
        variable: 'RECON_HOLD_MATERIALITY',
        problem: `expected whole minor units (e.g. 100 for 1.00), got ${JSON.stringify(value ?? '')}`,
      });
    else if (twice('RECON_HOLD_MATERIALITY', currency ?? '', currency ?? 'the amount for all currencies')) continue;
    else if (currency === undefined) all = BigInt(value!);
    else byCurrency[currency] = BigInt(value!);
  }
  return { policy: { rules, materiality: { all, byCurrency } }, issues };
}

const splitList = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

let fromEnv: HoldPolicy | undefined;

/** The process's policy, read once (a bad value is refused at start-up by src/config/env.ts). */
export function holdPolicyFromEnv(): HoldPolicy {
  fromEnv ??= holdPolicyFrom(process.env).policy;
  return fromEnv;
}

import { DISCREPANCY_REGISTRY, SEVERITIES, type Severity } from '../reconciliation/discrepancies/registry';
import { amountInDoubt } from '../reconciliation/discrepancy-summary';

/**
 * How urgent an exception is and when it is due (docs/exceptions.md, "Severity and due dates"). Severity is the
 * highest of three: the type's default (the registry's), the amount in doubt, and the age since detection.
 * The due date comes from the severity at detection (type and amount, age nought), so it does not move while
 * the exception waits; an assignment may set another.
 */

export interface ExceptionPolicy {
  /** amount in doubt (minor units, any currency) from which an exception is at least this severe */
  readonly amountAtLeast: Readonly<Record<Exclude<Severity, 'low'>, bigint>>;
  /** a currency's own thresholds (minor units of that currency), where it is not amountAtLeast */
  readonly amountAtLeastByCurrency?: Readonly<Record<string, Readonly<Record<Exclude<Severity, 'low'>, bigint>>>>;
  /** hours since detection from which an exception is at least this severe */
  readonly ageHoursAtLeast: Readonly<Record<Exclude<Severity, 'low'>, number>>;
  /** hours from detection to the due date, per severity at detection */
  readonly slaHours: Readonly<Record<Severity, number>>;
  readonly writeOff: {
    /** the journal account a write-off is booked to */
    readonly account: string;
    /** a write-off of more than this (minor units) needs a second person's approval */
    readonly approvalAbove: bigint;
    /** the limit of a currency, in its minor units, where it is not approvalAbove */
    readonly approvalAboveByCurrency?: Readonly<Record<string, bigint>>;
  };
  /** releasing held money (the decision `pay`): above the limit, a second person approves */
  readonly pay: {
    /** a release of more than this (minor units) needs a second person's approval; null: never */
    readonly approvalAbove: bigint | null;
    readonly approvalAboveByCurrency?: Readonly<Record<string, bigint>>;
  };
}

export const DEFAULT_EXCEPTION_POLICY: ExceptionPolicy = {
  amountAtLeast: { medium: 100_000n, high: 1_000_000n, critical: 10_000_000n },
  ageHoursAtLeast: { medium: 72, high: 168, critical: 720 },
  slaHours: { low: 240, medium: 120, high: 48, critical: 24 },
  writeOff: { account: 'expense:write-offs', approvalAbove: 100_000n },
  // paying money that was in doubt is as final as writing it off: the same four eyes above the same sum
  pay: { approvalAbove: 100_000n },
};

/** The write-off approval limit of a currency (minor units): its own when configured, else the default. */
export function approvalLimitOf(policy: ExceptionPolicy, currency: string | null): bigint {
  const own = currency === null ? undefined : policy.writeOff.approvalAboveByCurrency?.[currency];
  return own ?? policy.writeOff.approvalAbove;
}

/** The limit above which releasing held money needs a second person, for a currency; null: no limit. */
export function releaseLimitOf(policy: ExceptionPolicy, currency: string | null): bigint | null {
  const own = currency === null ? undefined : policy.pay.approvalAboveByCurrency?.[currency];
  return own ?? policy.pay.approvalAbove;
}

/** Whether one person's decision on this much money needs a second person (a write-off or a release). */
export function needsSecondPerson(
  policy: ExceptionPolicy,
  decision: string | undefined,
  amount: bigint | null,
  currency: string | null,
): boolean {
  if (amount === null) return false;
  if (decision === 'write_off') return amount > approvalLimitOf(policy, currency);
  if (decision !== 'pay') return false;
  const limit = releaseLimitOf(policy, currency);
  return limit !== null && amount > limit;
}

const rank = (s: Severity) => SEVERITIES.indexOf(s);
const higher = (a: Severity, b: Severity): Severity => (rank(a) >= rank(b) ? a : b);
const abs = (v: bigint) => (v < 0n ? -v : v);

/** The part of an exception severity reads: its type, its values (for the amount in doubt), when it was found. */
export interface Assessed {
  readonly type: string;
  readonly values: Record<string, unknown>;
  readonly currency: string | null;
  readonly detected_at: string | null;
}

function defaultOf(type: string): Severity {
  return (DISCREPANCY_REGISTRY as Record<string, { severity: Severity } | undefined>)[type]?.severity ?? 'medium';
}

/** The thresholds by amount of a currency: its own when configured, else the default. */
export function amountThresholdsOf(policy: ExceptionPolicy, currency: string | null) {
  return (currency === null ? undefined : policy.amountAtLeastByCurrency?.[currency]) ?? policy.amountAtLeast;
}

function byAmount(amount: bigint | null, currency: string | null, policy: ExceptionPolicy): Severity {
  if (amount === null) return 'low';
  const a = abs(amount);
  const t = amountThresholdsOf(policy, currency);
  if (a >= t.critical) return 'critical';
  if (a >= t.high) return 'high';
  if (a >= t.medium) return 'medium';
  return 'low';
}

function byAge(hours: number, policy: ExceptionPolicy): Severity {
  if (hours >= policy.ageHoursAtLeast.critical) return 'critical';
  if (hours >= policy.ageHoursAtLeast.high) return 'high';
  if (hours >= policy.ageHoursAtLeast.medium) return 'medium';
  return 'low';
}

/** Whole hours from detection to `now` (nought when not yet detected or detected later). */
export function ageHours(d: Pick<Assessed, 'detected_at'>, now: Date): number {
  if (d.detected_at === null) return 0;
  const ms = now.getTime() - Date.parse(d.detected_at);
  return ms > 0 ? Math.floor(ms / 3_600_000) : 0;
}

/** The severity of an exception at `now`. */
export function severityOf(d: Assessed, now: Date, policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY): Severity {
  return higher(severityAtDetection(d, policy), byAge(ageHours(d, now), policy));
}

/** The severity when it was found: the type's default or the amount in doubt, whichever is higher. */
export function severityAtDetection(d: Assessed, policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY): Severity {
  return higher(defaultOf(d.type), byAmount(amountInDoubt(d), d.currency, policy));
}

/** When an exception is due, by the SLA of its severity at detection; null when not yet detected. */
export function dueAt(d: Assessed, policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY): Date | null {
  if (d.detected_at === null) return null;
  return new Date(Date.parse(d.detected_at) + policy.slaHours[severityAtDetection(d, policy)] * 3_600_000);
}

export const AGE_BUCKETS = ['under 1 day', '1-3 days', '3-7 days', '7-30 days', 'over 30 days'] as const;
export type AgeBucket = (typeof AGE_BUCKETS)[number];

/** The age bucket of the reports, the console and the metrics. */
export function ageBucketOf(hours: number): AgeBucket {
  if (hours < 24) return 'under 1 day';
  if (hours < 72) return '1-3 days';
  if (hours < 168) return '3-7 days';
  if (hours < 720) return '7-30 days';
  return 'over 30 days';
}

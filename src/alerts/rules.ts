import { DateTime } from 'luxon';
import type { AlertRule, DiscrepancyMatch } from '../config/alerts';
import type { AlertKind } from '../events/alert-events';
import { eventIdFor } from '../events/ids';
import { documentText } from '../input-rules';
import { ageHours, DEFAULT_EXCEPTION_POLICY, dueAt, type ExceptionPolicy, severityOf } from '../exceptions/severity';
import { SEVERITIES } from '../reconciliation/discrepancies/registry';
import type { DiscrepancyRecord } from '../reconciliation/discrepancy-queries';
import { amountInDoubt, moneyText } from '../reconciliation/discrepancy-summary';

/**
 * Which alerts the facts call for (docs/exceptions.md, "Alerts"): pure functions from open discrepancies, failed
 * job runs and sync completions to candidate alerts, each with its deterministic id. Whether a candidate is new
 * is the evaluation's business (evaluate.ts).
 */

export interface Candidate {
  readonly alertId: string;
  readonly rule: string;
  readonly kind: AlertKind;
  readonly subject: string;
  readonly title: string;
  readonly text: string;
  readonly facts: Record<string, unknown>;
  readonly channels: readonly string[];
}

/** The alert id: the same rule, kind and subject give the same id on every run and every worker. */
export function alertIdOf(rule: string, kind: AlertKind, subject: string): string {
  return eventIdFor('alert', { rule, kind, subject });
}

const abs = (v: bigint) => (v < 0n ? -v : v);
const rank = (s: string) => SEVERITIES.indexOf(s as (typeof SEVERITIES)[number]);

/** True when an open discrepancy meets every condition of the match at `now`. */
export function matches(
  d: DiscrepancyRecord,
  m: DiscrepancyMatch,
  now: Date,
  policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY,
): boolean {
  if (d.status !== 'open') return false;
  if (m.types && !m.types.includes(d.type)) return false;
  if (m.currency !== undefined && d.currency !== m.currency) return false;
  if (m.subMerchant !== undefined && d.sub_merchant_id !== m.subMerchant && !d.sub_merchant_ids.includes(m.subMerchant))
    return false;
  if (m.minAmount !== undefined) {
    const a = amountInDoubt(d);
    if (a === null || abs(a) < m.minAmount) return false;
  }
  if (m.minAgeHours !== undefined && ageHours(d, now) < m.minAgeHours) return false;
  if (m.severity !== undefined && rank(severityOf(d, now, policy)) < rank(m.severity)) return false;
  return true;
}

/** The facts of a discrepancy an alert carries (plain JSON: the amount as a string of minor units). */
export function discrepancyFacts(d: DiscrepancyRecord, now: Date, policy: ExceptionPolicy): Record<string, unknown> {
  const amount = amountInDoubt(d);
  return {
    discrepancyId: d.id,
    type: d.type,
    currency: d.currency,
    amountInDoubt: amount === null ? null : amount.toString(),
    subMerchantIds: d.sub_merchant_ids,
    paymentId: d.payment_id,
    severity: severityOf(d, now, policy),
    dueAt: dueAt(d, policy)?.toISOString() ?? null,
    ageHours: ageHours(d, now),
  };
}

/** A value from the PSP or the bank, on one line: a line break in it must not forge a line of the alert's text. */
const oneLine = (v: string) => documentText(v, 200);

function describe(d: DiscrepancyRecord, now: Date, policy: ExceptionPolicy): string {
  const amount = amountInDoubt(d);
  const parts = [
    `${d.type.replaceAll('_', ' ')}`,
    amount === null ? null : `amount in doubt ${moneyText(abs(amount), d.currency)}`,
    d.sub_merchant_ids.length ? `sub-merchant ${d.sub_merchant_ids.map(oneLine).join(', ')}` : null,
    d.payment_id ? `payment ${oneLine(d.payment_id)}` : null,
    `severity ${severityOf(d, now, policy)}`,
    `due ${dueAt(d, policy)?.toISOString() ?? '-'}`,
    `id ${d.id}`,
  ];
  return parts.filter(Boolean).join('; ');
}

type DiscrepancyRule = Extract<AlertRule, { on: 'discrepancy' }>;

/** Per discrepancy rule, an alert for each open discrepancy it matches, and an escalation for each one overdue. */
export function discrepancyCandidates(
  rules: readonly AlertRule[],
  open: readonly DiscrepancyRecord[],
  now: Date,
  policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY,
): Candidate[] {
  const out: Candidate[] = [];
  for (const rule of rules.filter((r): r is DiscrepancyRule => r.on === 'discrepancy')) {
    for (const d of open) {
      if (!matches(d, rule.match, now, policy)) continue;
      const facts = discrepancyFacts(d, now, policy);
      const text = describe(d, now, policy);
      const base = { rule: rule.name, subject: d.id, facts, channels: rule.channels };
      out.push({
        ...base,
        alertId: alertIdOf(rule.name, 'discrepancy', d.id),
        kind: 'discrepancy',
        title: `New exception: ${d.type.replaceAll('_', ' ')}`,
        text,
      });
      const due = dueAt(d, policy);
      if (rule.escalate && due !== null && due.getTime() < now.getTime())
        out.push({
          ...base,
          alertId: alertIdOf(rule.name, 'escalation', d.id),
          kind: 'escalation',
          title: `Exception overdue: ${d.type.replaceAll('_', ' ')}`,
          text: `past its due date ${due.toISOString()}: ${text}`,
        });
    }
  }
  return out;
}

/** A failed job run, as the job_runs table has it. */
export interface FailedRun {
  readonly job: string;
  readonly scheduledFor: Date;
  readonly attempt: number;
  readonly error: string | null;
  readonly finishedAt: Date | null;
}

/** One alert per failed attempt of a job occurrence, per job_failed rule. */
export function jobFailedCandidates(rules: readonly AlertRule[], failed: readonly FailedRun[]): Candidate[] {
  return rules
    .filter((r) => r.on === 'job_failed')
    .flatMap((rule) =>
      failed.map((f) => {
        const subject = `${f.job}@${f.scheduledFor.toISOString()}#${f.attempt}`;
        return {
          alertId: alertIdOf(rule.name, 'job_failed', subject),
          rule: rule.name,
          kind: 'job_failed' as const,
          subject,
          title: `Job failed: ${f.job}`,
          text: `${f.job} scheduled for ${f.scheduledFor.toISOString()} failed (attempt ${f.attempt}): ${documentText(f.error ?? 'no error text', 500)}`,
          facts: {
            job: f.job,
            scheduledFor: f.scheduledFor.toISOString(),
            attempt: f.attempt,
            error: f.error,
            finishedAt: f.finishedAt?.toISOString() ?? null,
          },
          channels: rule.channels,
        };
      }),
    );
}

/** The last completed sync of a PSP project (null: never). */
export interface SyncState {
  readonly posId: string;
  readonly project: string;
  readonly lastCompletedAt: Date | null;
}

/**
 * A project whose sync has not completed within the rule's window: one alert per lapse, keyed by the last
 * completion seen (a new completion ends the lapse; the next lapse is another alert).
 */
export function syncOverdueCandidates(
  rules: readonly AlertRule[],
  syncs: readonly SyncState[],
  now: Date,
): Candidate[] {
  const out: Candidate[] = [];
  for (const rule of rules) {
    if (rule.on !== 'sync_overdue') continue;
    for (const s of syncs) {
      const last = s.lastCompletedAt;
      if (last !== null && now.getTime() - last.getTime() <= rule.withinHours * 3_600_000) continue;
      const subject = `${s.posId}@${last?.toISOString() ?? 'never'}`;
      out.push({
        alertId: alertIdOf(rule.name, 'sync_overdue', subject),
        rule: rule.name,
        kind: 'sync_overdue',
        subject,
        title: `Sync overdue: ${s.project}`,
        text: `no sync of ${s.project} (${s.posId}) completed within ${rule.withinHours} h; last completed ${last?.toISOString() ?? 'never'}`,
        facts: {
          posId: s.posId,
          project: s.project,
          lastCompletedAt: last?.toISOString() ?? null,
          withinHours: rule.withinHours,
        },
        channels: rule.channels,
      });
    }
  }
  return out;
}

/** The local day of `now` in the zone (YYYY-MM-DD) and its hour. */
function localDay(now: Date, timezone: string): { day: string; hour: number } {
  const t = DateTime.fromJSDate(now, { zone: timezone });
  return { day: t.toISODate()!, hour: t.hour };
}

/** The digest's figures: open exceptions by severity, those overdue, the amount in doubt per currency. */
export function digestFacts(open: readonly DiscrepancyRecord[], now: Date, policy: ExceptionPolicy) {
  const bySeverity: Record<string, number> = Object.fromEntries(SEVERITIES.map((s) => [s, 0]));
  const amount = new Map<string, bigint>();
  let overdue = 0;
  for (const d of open) {
    if (d.status !== 'open') continue;
    bySeverity[severityOf(d, now, policy)]! += 1;
    const due = dueAt(d, policy);
    if (due !== null && due.getTime() < now.getTime()) overdue++;
    const a = amountInDoubt(d);
    if (a !== null && d.currency) amount.set(d.currency, (amount.get(d.currency) ?? 0n) + abs(a));
  }
  const amountInDoubtByCurrency = Object.fromEntries([...amount].sort().map(([c, v]) => [c, v.toString()]));
  return { open: open.filter((d) => d.status === 'open').length, bySeverity, overdue, amountInDoubtByCurrency };
}

/** Once per local day (RECON_TIMEZONE), from the rule's hour on: the day's digest. */
export function digestCandidates(
  rules: readonly AlertRule[],
  open: readonly DiscrepancyRecord[],
  now: Date,
  timezone: string,
  policy: ExceptionPolicy = DEFAULT_EXCEPTION_POLICY,
): Candidate[] {
  const { day, hour } = localDay(now, timezone);
  const out: Candidate[] = [];
  for (const rule of rules) {
    if (rule.on !== 'digest' || hour < rule.atHour) continue;
    const f = digestFacts(open, now, policy);
    const money = Object.entries(f.amountInDoubtByCurrency).map(([c, v]) => moneyText(BigInt(v), c));
    out.push({
      alertId: alertIdOf(rule.name, 'digest', day),
      rule: rule.name,
      kind: 'digest',
      subject: day,
      title: `Exceptions on ${day}: ${f.open} open, ${f.overdue} overdue`,
      text: [
        `${f.open} open exceptions, ${f.overdue} past their due date.`,
        `By severity: ${SEVERITIES.map((s) => `${s} ${f.bySeverity[s]}`).join(', ')}.`,
        `Amount in doubt: ${money.length ? money.join(', ') : 'none'}.`,
      ].join('\n'),
      facts: { day, ...f },
      channels: rule.channels,
    });
  }
  return out;
}

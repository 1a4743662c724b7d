import type { Sql } from '../db/connect';
import { listDiscrepancies } from '../reconciliation/discrepancy-queries';
import type { DiscrepancyRecord } from '../reconciliation/discrepancy-types';
import type { GroundTruthEntry } from '../sandbox/model';

/**
 * `recon demo`'s own check: what recon found against what the sandbox injected, one finding at a time
 * (type and payment, or order, or bank reference), not only counts per type. The summary prints it, so a
 * line that says "exactly" can never sit above a count that says otherwise.
 */

export interface DemoCheck {
  /** what was compared, in a few words */
  readonly name: string;
  readonly passed: boolean;
  /** how many findings matched the injected ones */
  readonly matched: number;
  /** found but not injected */
  readonly unexpected: readonly string[];
  /** injected but not found */
  readonly missed: readonly string[];
}

/**
 * The discrepancies not resolved (open or accepted), read by status: the check compares only these, and a
 * month's resolved ones are most of the table (every order is not at the PSP until its payment is seen: about
 * a million rows at 1M payments, more than a worker's heap holds).
 */
export async function standingDiscrepancies(sql: Sql, timezone: string): Promise<DiscrepancyRecord[]> {
  const standing: DiscrepancyRecord[] = [];
  for (const status of ['open', 'accepted'] as const) {
    const r = await listDiscrepancies(sql, { status, timezone });
    if (!r.ok) throw new Error(r.message);
    standing.push(...r.value);
  }
  return standing;
}

/** Compares two lists of finding keys (each key once per finding; duplicates count). */
export function compareFindings(name: string, found: readonly string[], expected: readonly string[]): DemoCheck {
  // counted, not searched: a 1M month has tens of thousands of findings
  const wanted = new Map<string, number>();
  for (const e of expected) wanted.set(e, (wanted.get(e) ?? 0) + 1);
  const unexpected: string[] = [];
  for (const f of found) {
    const n = wanted.get(f) ?? 0;
    if (n > 0) wanted.set(f, n - 1);
    else unexpected.push(f);
  }
  const left = [...wanted].flatMap(([k, n]) => Array<string>(n).fill(k));
  return {
    name,
    passed: unexpected.length === 0 && left.length === 0,
    matched: found.length - unexpected.length,
    unexpected: unexpected.sort(),
    missed: left.sort(),
  };
}

/** A PSP-side finding as the check keys it: type and payment (none for a report's count). */
export const pspFindingKey = (d: { type: string; paymentId: string | null }): string =>
  `${d.type} ${d.type === 'report_count_mismatch' ? '-' : (d.paymentId ?? '-')}`;

/**
 * The sandbox's injections that recon must report as open: a webhook lost on the way that healing recovered
 * is no discrepancy (recon asked for it again and got it); one lost for good is, and so is one whose re-send
 * the sandbox could not deliver (`notDelivered`: no 2xx came back, and the stand-in PSP does not send again),
 * since recon never received it.
 */
export function pspTruthKeys(
  truth: readonly GroundTruthEntry[],
  notDelivered: readonly { transactionId: string }[] = [],
): string[] {
  const undelivered = new Set(notDelivered.map((w) => w.transactionId));
  return truth
    .filter(
      (g) =>
        g.type !== 'missing_webhook' ||
        (g.detail as { lostForGood?: boolean }).lostForGood === true ||
        (g.transactionId !== null && undelivered.has(g.transactionId)),
    )
    .map((g) => pspFindingKey(g))
    .sort();
}

/** Counts of keys by their first word (the type), sorted: the summary's per-type table. */
export function countByType(keys: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) {
    const t = k.split(' ')[0]!;
    out[t] = (out[t] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** One line per check: passed with its count, or what was unexpected and what was missed. */
export function checkLines(checks: readonly DemoCheck[]): string[] {
  const all = checks.every((c) => c.passed);
  return [
    `check: ${all ? 'PASSED' : 'FAILED'} — recon's findings ${all ? 'are exactly' : 'differ from'} what the sandbox injected`,
    ...checks.map((c) =>
      c.passed
        ? `  ${c.name}: exactly the ${c.matched} injected`
        : `  ${c.name}: NOT the injected ones: unexpected ${c.unexpected.join('; ') || 'none'}, missed ${c.missed.join('; ') || 'none'}`,
    ),
  ];
}

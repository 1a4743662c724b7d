import { dataOf } from '../../events/catalog';
import { StatementIssued, statementStream } from '../../events/statement-events';
import type { StatementFigures } from '../../ledger/ledger-queries';
import { comparePositions, parsePosition, type EventStore, type Position } from '../../store/types';

/**
 * Statements build on the ones issued before them: a month opens at the closing finance was last told
 * (the previous statement's), and whatever changed in earlier months since (a late row, a status that
 * turned, a correction, a journal rebuilt by better rules) is shown as this month's adjustments instead of
 * silently re-stating a month that was already paid: without it, a January sale that failed after
 * January's statement was issued would vanish from January and never be clawed back.
 *
 * What a run stated is kept per receiver name (StatementIssued.closings), because a sub-merchant's id for a
 * name can change between runs (a receiver unknown to the directory, stated as `receiver:<name>`, is later
 * registered). Only what the event log says counts (StatementIssued events at or before the cut), so a
 * statement issued again at the same position is the same statement.
 */

export interface IssuedRun {
  readonly month: string;
  /** the zone its months were cut in (RECON_TIMEZONE when it was issued) */
  readonly timezone?: string;
  /** position the issued figures were cut at */
  readonly cut: Position;
  readonly cutText: string;
  /** null: every sub-merchant of the month */
  readonly subMerchantId: string | null;
  /** what the run stated, `receiverName \u0000 currency` → minor units; absent for runs recorded before it was kept */
  readonly closings?: ReadonlyMap<string, bigint>;
  /** what the run held pending investigation, `subMerchantId \u0000 currency` → minor units (src/export/statements/payouts.ts) */
  readonly held?: ReadonlyMap<string, bigint>;
  /** what the run carried as owed back by the sub-merchant, `subMerchantId \u0000 currency` → minor units (> 0 only) */
  readonly owedBack?: ReadonlyMap<string, bigint>;
}

const LOOKBACK_MONTHS = 36;

function monthsBefore(month: string, n: number): string[] {
  let [y, m] = month.split('-').map(Number) as [number, number];
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    m -= 1;
    if (m === 0) {
      m = 12;
      y -= 1;
    }
    out.push(`${y}-${String(m).padStart(2, '0')}`);
  }
  return out;
}

export const closingKey = (receiver: string, currency: string) => `${receiver}\u0000${currency}`;

/**
 * Statements issued for the months before `month` (up to three years back) in the same time zone (any zone
 * when `timezone` is null), by
 * events at or before `cut`: the latest month first; within a month, the latest cut first (a statement
 * regenerated at an older position for proof is not what the next month builds on), then the latest issue.
 */
export async function issuedBefore(
  store: EventStore,
  month: string,
  timezone: string | null,
  cut: Position,
): Promise<IssuedRun[]> {
  const out: IssuedRun[] = [];
  for (const m of monthsBefore(month, LOOKBACK_MONTHS)) {
    const events = await store.readStream(statementStream(m));
    const runs = events
      .filter((e) => e.type === StatementIssued.type && comparePositions(e.position, cut) <= 0)
      .map((e) => ({ e, d: dataOf(StatementIssued, e) }))
      .filter(({ d }) => timezone === null || d.timezone === timezone)
      .map(({ e, d }) => ({ e, d, cut: parsePosition(d.position) }))
      .sort((a, b) => comparePositions(b.cut, a.cut) || comparePositions(b.e.position, a.e.position));
    for (const { d, cut: runCut } of runs) {
      out.push({
        month: d.month,
        timezone: d.timezone,
        cut: runCut,
        cutText: d.position,
        subMerchantId: d.subMerchantId,
        ...(d.closings ? { closings: new Map(d.closings.map(([r, c, v]) => [closingKey(r, c), BigInt(v)])) } : {}),
        ...(d.payouts
          ? {
              held: new Map(d.payouts.map((p) => [closingKey(p.subMerchantId, p.currency), BigInt(p.held)])),
              owedBack: new Map(
                d.payouts.flatMap((p) =>
                  p.owedBack ? [[closingKey(p.subMerchantId, p.currency), BigInt(p.owedBack)] as const] : [],
                ),
              ),
            }
          : {}),
      });
    }
  }
  return out;
}

/**
 * The run a sub-merchant's statement builds on: the latest that covered it — a run for all, or one for it
 * that stated every name it has now (`names`). A run for it alone states only the names it had then: a name
 * joined since (a `receiver:<name>` registered under it) was stated by a run for all, and a statement built on
 * the single run would count it at 0 and pay it again.
 */
export function previousRunOf(
  runs: readonly IssuedRun[],
  subMerchantId: string,
  names: readonly string[] = [],
): IssuedRun | undefined {
  return runs.find((r) => {
    if (r.subMerchantId === null) return true;
    if (r.subMerchantId !== subMerchantId) return false;
    if (!r.closings) return true;
    const stated = new Set([...r.closings.keys()].map((k) => k.split('\u0000')[0]));
    return names.every((n) => stated.has(n));
  });
}

/**
 * The month's figures opened at the previous statement's closing (the sum of what it stated for the
 * receiver names the sub-merchant has now), with the difference as adjustments.
 */
export async function openAtPreviousStatements<F extends Omit<StatementFigures, 'known'>>(
  figures: readonly F[],
  runs: readonly IssuedRun[],
  deps: {
    /** what a run stated (its recorded closings, or the journal's at its cut) */
    closingsOf(run: IssuedRun): Promise<ReadonlyMap<string, bigint>>;
    /** the receiver names of a sub-merchant now */
    namesOf(subMerchantId: string): Promise<readonly string[]>;
  },
): Promise<F[]> {
  const out: F[] = [];
  for (const f of figures) {
    const names = await deps.namesOf(f.subMerchantId);
    const run = previousRunOf(runs, f.subMerchantId, names);
    if (!run) {
      out.push(f);
      continue;
    }
    const closings = await deps.closingsOf(run);
    let opening = 0n;
    for (const name of names) opening += closings.get(closingKey(name, f.currency)) ?? 0n;
    out.push({ ...f, opening, adjustments: f.opening - opening, previousStatement: `${run.month} at ${run.cutText}` });
  }
  return out;
}

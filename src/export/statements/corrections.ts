import { stableStringify } from '../../canonical';
import type { StatementsConfig } from '../../config/statements';
import { dataOf, type EventData, isEvent } from '../../events/catalog';
import {
  StatementIssued,
  StatementNumbered,
  statementNumberStream,
  statementStream,
} from '../../events/statement-events';
import { netAsks } from '../../reconciliation/payouts/asks';
import { comparePositions, type EventStore, type Position, parsePosition } from '../../store/types';
import { closingKey } from './previous';
import type { StatementPayoutSection } from './figures';
import { issuedAtOf, numberText } from './header';
import type { StatementPayout } from './payouts';

/**
 * A month issued again (docs/outputs.md, "Issuing a month again"). Nothing changed since its latest run: the
 * run is reproduced at that run's cut, so the same numbers, dates and bytes, and nothing new is recorded.
 * Something changed: the run is a correction, which names the statement it corrects and asks only what the
 * month's earlier statements did not. Either way the statements print the issuer, contact and dispute lines
 * the month was first issued with, never what the environment of the machine running it says now.
 */

type Issued = EventData<typeof StatementIssued>;

/** A run of the month as its StatementIssued recorded it. */
export interface MonthRun {
  readonly eventId: string;
  /** where its event is in the store */
  readonly position: Position;
  /** where its figures were cut */
  readonly cut: Position;
  readonly data: Issued;
  readonly issuedAt: Date;
}

/** The month's runs in `timezone`, in the order they were recorded. */
export async function monthRuns(store: EventStore, month: string, timezone: string): Promise<MonthRun[]> {
  return (await store.readStream(statementStream(month)))
    .filter((e) => isEvent(StatementIssued, e))
    .map((e) => {
      const data = dataOf(StatementIssued, e);
      return { eventId: e.id, position: e.position, cut: parsePosition(data.position), data, issuedAt: issuedAtOf(e) };
    })
    .filter((r) => r.data.timezone === timezone);
}

/** The settings as StatementIssued records them (unset ones left out). */
export function recordedSettings(c: StatementsConfig): NonNullable<Issued['settings']> {
  return {
    ...(c.issuerName ? { issuerName: c.issuerName } : {}),
    ...(c.issuerAddress ? { issuerAddress: c.issuerAddress } : {}),
    ...(c.issuerTaxId ? { issuerTaxId: c.issuerTaxId } : {}),
    ...(c.contact ? { contact: c.contact } : {}),
    ...(c.dispute ? { dispute: c.dispute } : {}),
    language: c.language,
  };
}

/**
 * What the month's statements print of the issuer: the first run's that recorded it; the environment's
 * (`current`) for a month not issued yet. `record` is false for a month first issued before the settings were
 * recorded: its runs keep the event they had (a run issued again at its cut stays the same run).
 */
export function monthSettings(
  runs: readonly MonthRun[],
  current: StatementsConfig,
): { config: StatementsConfig; record: boolean } {
  if (runs.length === 0) return { config: current, record: true };
  const s = runs.find((r) => r.data.settings)?.data.settings;
  if (!s) return { config: current, record: false };
  return {
    config: {
      issuerName: s.issuerName,
      issuerAddress: s.issuerAddress,
      issuerTaxId: s.issuerTaxId,
      contact: s.contact,
      dispute: s.dispute,
      language: s.language,
    },
    record: true,
  };
}

// what a run states that money depends on: figures (by their hash), amounts due and what is held, files
const stated = (d: Issued) =>
  stableStringify({
    figures: d.figuresSha256,
    files: d.files,
    owed: (d.payouts ?? []).map((p) => [p.subMerchantId, p.currency, p.amountDue, p.held, p.holds]),
  });

/**
 * The run a new one (`run`, as it would be recorded) reproduces: the month's latest for the same sub-merchants
 * (all, or the one), cut elsewhere, that states the same figures, amounts due, holds and files. Undefined when
 * nothing was issued or something changed (the new run is then a correction).
 */
export function unchangedRun(runs: readonly MonthRun[], run: Issued): MonthRun | undefined {
  const latest = runs.filter((r) => r.data.subMerchantId === run.subMerchantId).at(-1);
  if (!latest || latest.data.position === run.position) return undefined;
  return stated(latest.data) === stated(run) ? latest : undefined;
}

/** What a correction says of the statements it corrects, per sub-merchant and currency. */
export interface Corrections {
  /** the statement this sub-merchant's corrects: the latest numbered by an earlier run of the month */
  statementOf(subMerchantId: string): Promise<{ number: string; issuedAt: Date } | undefined>;
  /**
   * what the month's earlier runs still ask finance to pay: their `payable`s, lowered by a correction that stated
   * the month lower (payouts/asks.ts), so a correction after it shows what that statement asked in all
   */
  askedBefore(subMerchantId: string, currency: string): bigint;
  /** the latest payout reference they issued, for a correction that asks nothing new */
  referenceOf(subMerchantId: string, currency: string): string | null;
  /** the latest earlier run, undefined when this run is the month's first */
  readonly latest?: MonthRun;
}

/**
 * The month's runs before one cut at `cut`: recorded at or before it and cut elsewhere (statement-payouts.ts
 * takes the same ones for what was asked before), so a correction issued again at its cut says the same.
 */
export async function correctionsAt(store: EventStore, runs: readonly MonthRun[], cut: Position): Promise<Corrections> {
  const earlier = runs.filter((r) => comparePositions(r.cut, cut) !== 0 && comparePositions(r.position, cut) <= 0);
  const ids = new Set(earlier.map((r) => r.eventId));
  const numbers = new Map<string, { number: string; issuedAt: Date } | undefined>();
  const payoutsOf = (id: string, currency: string) =>
    earlier.flatMap(
      (r) => r.data.payouts?.filter((p) => closingKey(p.subMerchantId, p.currency) === closingKey(id, currency)) ?? [],
    );
  return {
    async statementOf(subMerchantId) {
      if (earlier.length === 0) return undefined; // the month's first run corrects nothing
      if (!numbers.has(subMerchantId)) {
        const mine = (await store.readStream(statementNumberStream(subMerchantId)))
          .filter((e) => isEvent(StatementNumbered, e))
          .map((e) => dataOf(StatementNumbered, e))
          .filter((n) => ids.has(n.run))
          .sort((a, b) => b.number - a.number)[0];
        const run = mine && earlier.find((r) => r.eventId === mine.run);
        numbers.set(
          subMerchantId,
          run && mine ? { number: numberText(mine.number), issuedAt: run.issuedAt } : undefined,
        );
      }
      return numbers.get(subMerchantId);
    },
    askedBefore: (id, currency) => stillAskedBy(earlier, id, currency),
    referenceOf: (id, currency) =>
      payoutsOf(id, currency)
        .map((p) => p.reference)
        .filter((r) => r !== null)
        .at(-1) ?? null,
    ...(earlier.length > 0 ? { latest: earlier.at(-1)! } : {}),
  };
}

/** What `runs` still ask of a sub-merchant in a currency, in all (asks.ts, the reading of the payouts leg). */
function stillAskedBy(runs: readonly MonthRun[], id: string, currency: string): bigint {
  const key = closingKey(id, currency);
  const asks = netAsks(
    runs.flatMap((r) =>
      (r.data.payouts ?? [])
        .filter((p) => closingKey(p.subMerchantId, p.currency) === key)
        .map((p) => ({
          subMerchantId: p.subMerchantId,
          currency: p.currency,
          month: r.data.month,
          reference: p.reference,
          payable: BigInt(p.payable),
          stillAsked: p.stillAsked === undefined ? null : BigInt(p.stillAsked),
          cut: r.cut,
        })),
    ),
  );
  return [...asks.values()].reduce((s, v) => s + v, 0n);
}

/**
 * The payouts as the statements and the index show them. On a correction: the bridge's "already asked" line,
 * the reference already issued when this run asks for nothing new (so the index keeps it and its status), and
 * in the index an amount due that is only the difference.
 */
export async function shownPayouts(
  payouts: readonly StatementPayout[],
  subMerchantIds: readonly string[],
  corrections: Corrections | undefined,
) {
  const statements = new Map<string, { number: string; issuedAt: Date }>();
  if (corrections)
    for (const id of subMerchantIds) {
      const corrected = await corrections.statementOf(id);
      if (corrected) statements.set(id, corrected);
    }
  const sections: Array<StatementPayout & StatementPayoutSection> = payouts.map((p) =>
    corrections && statements.has(p.subMerchantId)
      ? {
          ...p,
          reference: p.reference ?? corrections.referenceOf(p.subMerchantId, p.currency),
          correction: { askedBefore: corrections.askedBefore(p.subMerchantId, p.currency) },
        }
      : p,
  );
  const indexOf = (id: string, currency: string): StatementPayoutSection | undefined => {
    const p = sections.find((s) => s.subMerchantId === id && s.currency === currency);
    return p?.correction ? { ...p, amountDue: p.amountDue - p.correction.askedBefore } : p;
  };
  return { statements, sections, indexOf };
}

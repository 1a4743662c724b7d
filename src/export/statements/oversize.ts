import { formatMinor } from '../../money';
import { spreadsheetHolds } from '../workbook/xlsx';
import { ExportError } from '../errors';
import { BRIDGE, type StatementFigures } from './figures';

/**
 * A statement a workbook cannot state: one of its bridge figures has more significant digits than a spreadsheet
 * number keeps (xlsx.ts minorToMajor). It is left out of the run before anything is numbered, written or recorded,
 * so that the other sub-merchants' statements are issued; the run then names it and fails.
 */
export interface RefusedStatement {
  readonly subMerchantId: string;
  readonly subMerchantName: string;
  readonly currency: string;
  /** the bridge line, in English */
  readonly figure: string;
  readonly amount: bigint;
}

/** The first figure of each sub-merchant's statement that a workbook cannot hold exactly. */
export function oversizedStatements(figures: readonly StatementFigures[]): RefusedStatement[] {
  const refused = new Map<string, RefusedStatement>();
  for (const f of figures) {
    if (refused.has(f.subMerchantId)) continue;
    // the held and paid-out lines come from the payouts, which are at most what the figures make payable
    const line = BRIDGE.find((l) => !spreadsheetHolds(l.value(f)));
    if (line)
      refused.set(f.subMerchantId, {
        subMerchantId: f.subMerchantId,
        subMerchantName: f.subMerchantName,
        currency: f.currency,
        figure: line.label,
        amount: line.value(f),
      });
  }
  return [...refused.values()];
}

/** One line per refused statement: whose, which figure, why, and what to do. */
export function refusalText(month: string, refused: readonly RefusedStatement[]): string {
  return refused
    .map(
      (r) =>
        `the statement of ${r.subMerchantId} (${r.subMerchantName}) for ${month} was not issued: its figure "${r.figure}" is ${formatMinor(r.amount)} ${r.currency}, more than the 15 significant digits a spreadsheet number keeps exactly; check the month's operations of ${r.subMerchantId} (an amount entered wrongly is corrected at its source), then issue it alone with \`recon statements --month ${month} --sub-merchant ${r.subMerchantId}\``,
    )
    .join('\n');
}

/** The run's failure once the other statements are issued (or at once, when none is left to issue). */
export function refusedError(month: string, refused: readonly RefusedStatement[], issued: number): ExportError {
  const head =
    issued > 0
      ? `${refused.length} of ${refused.length + issued} statements of ${month} not issued (the other ${issued} were issued):`
      : `nothing of ${month} issued by this run:`;
  return new ExportError('EXPORT_AMOUNT_TOO_LARGE', `${head}\n${refusalText(month, refused)}`);
}

/**
 * The month without the statements a workbook cannot state: their figures, and the closings of their receivers
 * (a statement not issued is no month's opening). A run for one sub-merchant, or one with none left, fails.
 */
export async function leaveOutOversized<
  M extends {
    figures: readonly StatementFigures[];
    closings: Map<string, bigint>;
    namesOf(id: string): Promise<readonly string[]>;
  },
>(m: M, month: string): Promise<{ month: M; refused: RefusedStatement[] }> {
  const refused = oversizedStatements(m.figures);
  if (refused.length === 0) return { month: m, refused };
  const ids = new Set(refused.map((r) => r.subMerchantId));
  const figures = m.figures.filter((f) => !ids.has(f.subMerchantId));
  if (figures.length === 0) throw refusedError(month, refused, 0);
  const names = new Set((await Promise.all([...ids].map((id) => m.namesOf(id)))).flat());
  const closings = new Map([...m.closings].filter(([k]) => !names.has(k.split('\u0000')[0]!)));
  return { month: { ...m, figures, closings }, refused };
}

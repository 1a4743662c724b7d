import type { CashSheetData } from './cash-sheet';
import type { OpenOnDay } from './open';
import type { JournalTotals, Scope, Source, SourceTotals } from './sources';
import type { OrdersReportData } from './orders-sheet';
import type { DecisionRow } from './decisions-sheet';

/** The nightly report's data: what the queries read (nightly-report.ts) and the workbook shows (nightly-workbook.ts). */

export interface MatchingTotals {
  readonly scope: Scope;
  readonly operations: number;
  readonly matched: number;
  readonly unmatched: number;
  readonly inAllThree: number;
  readonly noRegister: number;
  readonly noPeriod: number;
  readonly noWebhook: number;
  readonly withOpenDiscrepancy: number;
}

export interface DiscrepancyCount {
  readonly type: string;
  readonly subMerchantId: string | null;
  readonly opened: number;
  readonly resolved: number;
  readonly accepted: number;
  readonly open: number;
}

export interface SourceValue {
  readonly status: string | null;
  readonly amount: bigint | null;
  readonly currency: string | null;
}

export interface OpenDiscrepancy {
  readonly id: string;
  readonly type: string;
  readonly detectedAt: Date | null;
  readonly occurredAt: Date | null;
  readonly posId: string | null;
  readonly orderId: string | null;
  readonly paymentId: string | null;
  readonly method: string | null;
  readonly subMerchantId: string | null;
  /** every sub-merchant it touches (an operation's receivers); absent: `subMerchantId` alone */
  readonly subMerchantIds?: readonly string[];
  readonly receiverName: string | null;
  readonly currency: string | null;
  readonly values: Readonly<Record<Source, SourceValue | null>>;
  readonly evidence: number;
  /** what differs, each source's value and the difference (discrepancy-summary.ts) */
  readonly whatDiffers?: string;
  /** the difference in money where there is one (amount, fee, split), minor units */
  readonly difference?: bigint | null;
  /** the money it puts in doubt (discrepancy-summary.ts amountInDoubt), minor units */
  readonly amountInDoubt?: bigint | null;
  /** business days from its detection to the report's day */
  readonly ageDays?: number | null;
}

export interface SyncedWindow {
  readonly posId: string;
  readonly from: Date;
  readonly to: Date;
  readonly completedAt: Date;
  readonly reportId: string;
}

export interface NightlyReportData {
  readonly date: string;
  readonly timezone: string;
  /** when the report was written: its issue time */
  readonly writtenAt?: Date;
  readonly day: { readonly from: Date; readonly to: Date };
  readonly openWindow: { readonly from: Date; readonly to: Date };
  readonly sources: readonly SourceTotals[];
  /** null: the journal is not built */
  readonly journal?: readonly JournalTotals[] | null;
  readonly matching: readonly MatchingTotals[];
  readonly discrepancies: readonly DiscrepancyCount[];
  readonly open: readonly OpenDiscrepancy[];
  readonly windows: readonly SyncedWindow[];
  /** label → value: webhooks received/rejected, records rejected, and the job's own counters */
  readonly facts: ReadonlyArray<readonly [string, string | number]>;
  /** the Cash sheet (src/export/nightly/cash-sheet.ts); null when the settlement projection is not built */
  readonly cash?: CashSheetData | null;
  /** the Orders and Fee differences sheets (src/export/nightly/orders-sheet.ts), when the orders views are built */
  readonly orders?: OrdersReportData;
  /** the discrepancies as they stood at the day's end: ageing, money in doubt, month to date (nightly-open.ts) */
  readonly asOfDay?: OpenOnDay;
  /** the exceptions with work left, for the Decisions sheet (decisions-sheet.ts) */
  readonly decisions?: readonly DecisionRow[];
}

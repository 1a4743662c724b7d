import { DateTime } from 'luxon';
import { sha256Hex, stableStringify } from '../../canonical';
import { monthBounds } from '../../journal-rules';
import type { StatementLanguage } from '../../config/statements';
import type {
  AdjustmentEntry as LedgerAdjustment,
  StatementFigures as LedgerFigures,
  StatementLine as LedgerLine,
} from '../../ledger/ledger-queries';
import type { PayoutSection } from '../payouts/sheets';
import { ExportError } from '../errors';
import type { LineDetails } from './details';
import { BRIDGE_LABELS, PDF_BRIDGE_LABELS } from '../i18n/labels';
import { statementFileStem } from '../../statement-file-names';

/**
 * What a payout statement is made of: its figures, lines and sections as plain data, the bridge they must
 * satisfy, and the names of its files. The workbook (statement-workbooks.ts) and the PDF (statement-pdf.ts)
 * are both written from these.
 */

/** One sub-merchant's figures for one month and currency (bigint minor units). */
/** The figures of one statement (sub-merchant and currency), as the ledger gives them. */
export type StatementFigures = Omit<LedgerFigures, 'known'> & {
  /** paid out to the sub-merchant in the month, returns deducted (src/export/payouts/paid-out.ts); absent: none */
  readonly paidOut?: bigint;
  /**
   * movements of months between the previous statement's and this one, never stated (their statements were
   * never issued): part of the opening difference, but not an adjustment (statement-controls.ts)
   */
  readonly notStated?: bigint;
  /** those months ("2026-11 to 2027-04") */
  readonly notStatedMonths?: string;
};

/**
 * One operation line of a statement: what the workbook shows of the ledger's line, with how the customer paid
 * and the fee's parts when the recorded events tell them (statement-details.ts; absent: not looked up).
 */
export type StatementLine = Pick<
  LedgerLine,
  'at' | 'orderId' | 'paymentId' | 'method' | 'status' | 'share' | 'fee' | 'reserve' | 'net' | 'eventIds'
> &
  Partial<LineDetails>;
export type AdjustmentLine = Pick<
  LedgerAdjustment,
  'at' | 'kind' | 'orderId' | 'paymentId' | 'method' | 'status' | 'net' | 'eventIds'
> & {
  /** dated in a month never stated (see StatementFigures.notStated): listed apart, not as an adjustment */
  readonly notStated?: boolean;
};

export interface ReserveScheduleRow {
  readonly heldOn: string | Date;
  readonly currency: string;
  readonly held: bigint;
  readonly releaseOn: string | Date;
  readonly released: bigint;
}

/** What a statement was cut from: recorded in every workbook so a figure can be re-derived. */
export interface StatementMeta {
  readonly month: string;
  readonly timezone: string;
  /** event-store position ("commit/prepare") the figures were cut at */
  readonly position: string;
  readonly figuresSha256: string;
  /** a draft of a month not ended: every sheet and the file name say PROVISIONAL */
  readonly provisional?: boolean;
  /** the zone of the statements this run re-based from (--rebase-timezone) */
  readonly rebasedFrom?: string;
  /** the previous month's statement was never issued: said on the statement */
  readonly previousMonthNotIssued?: string;
}

/** A sheet's name, marked on a provisional statement. */
export const sheetName = (meta: Pick<StatementMeta, 'provisional'>, name: string) =>
  (meta.provisional ? `PROVISIONAL ${name}` : name).slice(0, 31);

/**
 * A correction (statement-corrections.ts): the month was issued before and changed since, so this statement
 * asks only what the statements before it did not.
 */
export interface CorrectionOf {
  /** what the month's earlier statements asked finance to pay, in this currency */
  readonly askedBefore: bigint;
}

/** A currency's payout as the statement shows it; `correction` on a correction only. */
export type StatementPayoutSection = PayoutSection & { readonly correction?: CorrectionOf };

export interface StatementSource {
  /** one row per currency, all of one sub-merchant */
  readonly figures: readonly StatementFigures[];
  lines(currency: string): AsyncIterable<StatementLine>;
  /** the entries behind a currency's adjustments (only asked for figures with a previous statement) */
  adjustments?(currency: string): AsyncIterable<AdjustmentLine>;
  readonly reserve: readonly ReserveScheduleRow[];
  /** per currency: holds, amount due, reference and what was paid out (absent: none computed) */
  readonly payouts?: readonly StatementPayoutSection[];
}

/** What heads a statement: who issues it to whom, its number and date, whom to ask (statement-header.ts). */
export interface StatementHeader {
  readonly language: StatementLanguage;
  readonly issuer: { readonly name?: string; readonly address?: string; readonly taxId?: string };
  readonly recipient: { readonly legalName?: string; readonly taxId?: string; readonly address?: string };
  /** unique and sequential per sub-merchant; null on a draft */
  readonly number: string | null;
  /** when the run was recorded as issued (a draft: when it was drawn up) */
  readonly issuedAt: Date;
  readonly contact?: string;
  readonly dispute?: string;
  /** on a correction: the statement it corrects (its number as printed and when it was issued) */
  readonly corrects?: { readonly number: string; readonly issuedAt: Date };
}

/** The header of a statement issued with nothing configured: English, its period's end as the date. */
export function plainHeader(meta: Pick<StatementMeta, 'month' | 'timezone'>): StatementHeader {
  return {
    language: 'en',
    issuer: {},
    recipient: {},
    number: null,
    issuedAt: monthRange(meta.month, meta.timezone).to.toJSDate(),
  };
}

/**
 * A statement's file name: the sub-merchant id and a readable slug of its name (src/statement-file-names.ts), then
 * the month. `file`: the workbook, the PDF, or finance's audit file beside them.
 */
export function statementFileName(
  subMerchantId: string,
  month: string,
  provisional = false,
  name?: string,
  file: 'xlsx' | 'pdf' | 'audit' = 'xlsx',
): string {
  const tail = provisional ? `${month}-PROVISIONAL` : month;
  // finance's audit file is the workbook's name with `-audit`: it sorts beside the statement it traces
  const ending = file === 'audit' ? '-audit.xlsx' : `.${file}`;
  return `${statementFileStem(subMerchantId, name)}-${tail}${ending}`;
}

/** Refuses a run in which two sub-merchants would write one file (also on a case-insensitive file system). */
export function checkStatementFileNames(
  subMerchants: Iterable<string | readonly [id: string, name: string]>,
  month: string,
): void {
  const seen = new Map<string, string>();
  for (const entry of subMerchants) {
    const [id, subMerchantName] = typeof entry === 'string' ? [entry, undefined] : entry;
    const name = statementFileName(id, month, false, subMerchantName).toLowerCase();
    const other = seen.get(name);
    if (other !== undefined) {
      throw new ExportError(
        'EXPORT_FILE_NAME_COLLISION',
        `sub-merchants ${JSON.stringify(other)} and ${JSON.stringify(id)} would write the same statement file ${statementFileName(id, month, false, subMerchantName)}; nothing was written`,
      );
    }
    seen.set(name, id);
  }
}
export const payoutsFileName = (month: string, provisional = false) =>
  `payouts-${month}${provisional ? '-PROVISIONAL' : ''}.xlsx`;

/** The net payable the bridge implies; statements refuse figures that do not add up. */
export function bridgeNet(f: StatementFigures): bigint {
  return f.gross - f.refunds - f.chargebacks - f.fees - f.reserveHeld + f.reserveReleased;
}

export function checkBridge(f: StatementFigures): void {
  const net = bridgeNet(f);
  const adjustments = f.adjustments ?? 0n;
  const paidOut = f.paidOut ?? 0n;
  const notStated = f.notStated ?? 0n;
  if (net !== f.netPayable || f.opening + adjustments + notStated + f.netPayable - paidOut !== f.closing) {
    throw new ExportError(
      'EXPORT_BRIDGE_MISMATCH',
      `figures of ${f.subMerchantId} ${f.currency} do not add up: movements give net ${net}, stated ${f.netPayable}; opening ${f.opening} + adjustments ${adjustments} + not stated before ${notStated} + net − paid out ${paidOut} ≠ closing ${f.closing}`,
    );
  }
}

/** sha-256 of the figures in a canonical order: equal figures give an equal hash, whatever the row order. */
export function figuresDigest(month: string, timezone: string, figures: readonly StatementFigures[]): string {
  const sorted = [...figures].sort((a, b) =>
    a.subMerchantId + '\u0000' + a.currency < b.subMerchantId + '\u0000' + b.currency ? -1 : 1,
  );
  return sha256Hex(stableStringify({ month, timezone, figures: sorted }));
}

/** The month's bounds as the ledger's queries cut it (`monthBounds`), in the zone. */
export function monthRange(month: string, timezone: string): { from: DateTime; to: DateTime } {
  const from = DateTime.fromFormat(month, 'yyyy-MM', { zone: timezone });
  if (!from.isValid) throw new RangeError(`not a month: ${JSON.stringify(month)} (expected YYYY-MM)`);
  const b = monthBounds(month, timezone);
  return { from: DateTime.fromJSDate(b.from, { zone: timezone }), to: DateTime.fromJSDate(b.to, { zone: timezone }) };
}

/** The month's amount due (all of it, whatever earlier statements asked). */
const dueOf = (f: StatementFigures, p?: PayoutSection) =>
  p?.amountDue ?? (f.adjustments ?? 0n) + (f.notStated ?? 0n) + f.netPayable;

// `gap`: a line only a statement with months never stated shows (true), or only one without (false);
// `correction`: a line only a correction shows; `owed`: a line only a statement with money owed back, brought
// forward or carried forward, in any of its currencies shows (true), or only one without (false)
export const BRIDGE: ReadonlyArray<{
  /** the line's name in BRIDGE_LABELS (src/export/i18n/labels.ts) */
  key: string;
  /** in English */
  label: string;
  value: (f: StatementFigures, p?: StatementPayoutSection) => bigint;
  gap?: boolean;
  correction?: boolean;
  owed?: boolean;
}> = [
  { key: 'opening', label: "Opening balance (the previous statement's closing)", value: (f) => f.opening },
  {
    key: 'adjustments',
    label: '± Adjustments to earlier months (sheet Adjustments)',
    value: (f) => f.adjustments ?? 0n,
  },
  {
    key: 'notStated',
    label: '± Months never stated before (sheet Not stated before)',
    value: (f) => f.notStated ?? 0n,
    gap: true,
  },
  { key: 'gross', label: '+ Gross sales (shares)', value: (f) => f.gross },
  { key: 'refunds', label: '− Refunds', value: (f) => -f.refunds },
  { key: 'chargebacks', label: '− Chargebacks', value: (f) => -f.chargebacks },
  { key: 'fees', label: '− Fees', value: (f) => -f.fees },
  { key: 'reserveHeld', label: '− Reserve held', value: (f) => -f.reserveHeld },
  { key: 'reserveReleased', label: '+ Reserve released', value: (f) => f.reserveReleased },
  { key: 'net', label: '= Net payable (sum of the six movements above)', value: (f) => f.netPayable },
  {
    key: 'held',
    label: '− Held pending investigation (sheet Held pending investigation)',
    value: (_f, p) => -(p?.held ?? 0n),
  },
  {
    key: 'releasedHold',
    label: '+ Released from hold (held on the previous statement)',
    value: (_f, p) => p?.released ?? 0n,
  },
  {
    key: 'broughtForward',
    label: '− Brought forward from earlier statements (owed by you)',
    value: (_f, p) => -(p?.broughtForward ?? 0n),
    owed: true,
  },
  {
    key: 'due',
    label: '= Amount due (adjustments + net payable − held + released)',
    value: (f, p) => p?.amountDue ?? (f.adjustments ?? 0n) + f.netPayable,
    gap: false,
    owed: false,
  },
  {
    key: 'dueGap',
    label: '= Amount due (adjustments + months never stated + net payable − held + released)',
    value: (f, p) => dueOf(f, p),
    gap: true,
    owed: false,
  },
  {
    key: 'dueOwed',
    label: '= Amount due (adjustments + net payable − held + released − brought forward)',
    value: (f, p) => dueOf(f, p),
    gap: false,
    owed: true,
  },
  {
    key: 'dueGapOwed',
    label: '= Amount due (adjustments + months never stated + net payable − held + released − brought forward)',
    value: (f, p) => dueOf(f, p),
    gap: true,
    owed: true,
  },
  {
    key: 'askedBefore',
    label: '− Already asked on the statement corrected',
    value: (_f, p) => -(p?.correction?.askedBefore ?? 0n),
    correction: true,
  },
  {
    key: 'dueCorrection',
    label: '= Amount due on this correction',
    value: (f, p) => dueOf(f, p) - (p?.correction?.askedBefore ?? 0n),
    correction: true,
  },
  {
    key: 'carriedForward',
    label: 'Carried forward to the next statement (owed by you)',
    value: (_f, p) => p?.owedBack ?? 0n,
    owed: true,
  },
  {
    key: 'paidOut',
    label: '− Paid out (sheet Paid out: dates and payout references)',
    value: (f) => -(f.paidOut ?? 0n),
  },
  {
    key: 'closing',
    label: 'Closing balance (opening + adjustments + net payable − paid out)',
    value: (f) => f.closing,
    gap: false,
  },
  {
    key: 'closingGap',
    label: 'Closing balance (opening + adjustments + months never stated + net payable − paid out)',
    value: (f) => f.closing,
    gap: true,
  },
];

/**
 * The bridge lines a statement of these figures shows: those of months never stated only when it has some, those
 * of a correction only on one, those of money owed back only when some is brought or carried forward.
 */
export function bridgeOf(
  figures: readonly StatementFigures[],
  payouts: readonly StatementPayoutSection[] = [],
): typeof BRIDGE {
  const gap = figures.some((f) => f.notStated !== undefined);
  const correction = payouts.some((p) => p.correction !== undefined);
  const owed = payouts.some((p) => (p.broughtForward ?? 0n) !== 0n || (p.owedBack ?? 0n) !== 0n);
  return BRIDGE.filter(
    (l) =>
      (l.gap === undefined || l.gap === gap) &&
      (l.owed === undefined || l.owed === owed) &&
      (!l.correction || correction),
  );
}

/** A bridge line's label in a statement's language (English when no translation is kept). */
export const bridgeLabel = (line: (typeof BRIDGE)[number], language: StatementLanguage): string =>
  BRIDGE_LABELS[language][line.key] ?? line.label;

/** A bridge line's label on the PDF, which names no workbook sheet. */
export const pdfBridgeLabel = (line: (typeof BRIDGE)[number], language: StatementLanguage): string =>
  PDF_BRIDGE_LABELS[language][line.key] ?? bridgeLabel(line, language);

/** "2025-01 (2025-01-01 to 2025-01-31, Europe/Kyiv)": finance's own documents. */
export const periodText = (meta: Pick<StatementMeta, 'month' | 'timezone'>) => {
  const { from, to } = monthRange(meta.month, meta.timezone);
  return `${meta.month} (${from.toISODate()} to ${to.minus({ days: 1 }).toISODate()}, ${meta.timezone})`;
};

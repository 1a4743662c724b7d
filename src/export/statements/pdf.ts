import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DateTime } from 'luxon';
import type PDFDocumentClass from 'pdfkit';
import { holdReason, LABELS, type Labels, operationWord, writtenDay } from '../i18n/labels';
import {
  bridgeOf,
  pdfBridgeLabel,
  type StatementFigures,
  type StatementHeader,
  type StatementMeta,
  type StatementSource,
} from './figures';
import { type HeldByCurrency, heldLines } from './held-sheet';
import { headerRows } from './summary';
import { addLine, releasesToCome, statementTitle } from './workbooks';
import { paymentMethodWords } from '../i18n/payment-methods';
import { createLocalTime, currencyExponent, yieldToIo } from '../workbook/xlsx';
import { boundLayoutCache, layFiguresByCharacter } from './pdf-layout';
import { cellsThroughPdfkit, type Doc, wrapped } from './pdf-cells';
import {
  type Column,
  heading,
  MARGIN,
  PAGE,
  pageFooters,
  ROW_HEIGHT,
  type RowLines,
  roomFor,
  table,
  tableStart,
  tableWriter,
} from './pdf-pages';
import { fontBytes, fontsOpenedByPdfkit, shareParsedFont } from './pdf-fonts';

/**
 * The PDF a sub-merchant receives beside its workbook: the same figures (the same StatementSource the
 * workbook is written from), laid out for reading and printing, with no internal references (no event
 * ids, no store positions). Fonts are DejaVu from the `dejavu-fonts-ttf` package, so Ukrainian and Latin
 * text render and nothing is downloaded. Pages are streamed to the file as they fill.
 */

const require = createRequire(import.meta.url);
const FONT_DIR = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const REGULAR = path.join(FONT_DIR, 'DejaVuSans.ttf');
const BOLD = path.join(FONT_DIR, 'DejaVuSans-Bold.ttf');
const FONT_FILES: Readonly<Record<string, string>> = { regular: REGULAR, bold: BOLD };

/**
 * Exact major-unit text of minor units, grouped by thousands in the language's custom: 123456n EUR →
 * "1,234.56" in English, "1 234,56" in Ukrainian (a no-break space between groups).
 */
export function formatAmount(minor: bigint, currency: string, language: 'en' | 'uk' = 'en'): string {
  const own = currencyExponent(currency);
  // a fraction of a yen (a percentage fee) is shown in hundredths, exactly: cut, the lines stopped adding up
  const exp = own < 2 && minor % 10n ** BigInt(2 - own) !== 0n ? 2 : own;
  const negative = minor < 0n;
  let digits = (negative ? -minor : minor).toString();
  // recon keeps every amount in hundredths; a currency with another exponent is shown with its own
  const scaled =
    exp === 2 ? digits : exp > 2 ? digits + '0'.repeat(exp - 2) : digits.slice(0, digits.length - (2 - exp)) || '0';
  digits = scaled.padStart(exp + 1, '0');
  const [group, point] = language === 'uk' ? ['\u00a0', ','] : [',', '.'];
  const whole = digits.slice(0, digits.length - exp).replace(/\B(?=(\d{3})+(?!\d))/g, group);
  const frac = exp > 0 ? `${point}${digits.slice(digits.length - exp)}` : '';
  return `${negative ? '−' : ''}${whole}${frac}`;
}

/** pdfkit (and its fonts' decompression), loaded at first use: most commands write no PDF. */
let pdfkitLoaded: typeof PDFDocumentClass | undefined;
const pdfkit = (): typeof PDFDocumentClass => (pdfkitLoaded ??= require('pdfkit') as typeof PDFDocumentClass);

/** Tests: pdfkit does the work these shortcuts save, for the same bytes either way; and when the file is kept. */
interface PdfOptions {
  /** pdfkit shapes every word itself (pdf-layout.ts) */
  readonly shapeEveryWord?: boolean;
  /** pdfkit writes every table cell through its own `text` (pdf-cells.ts) */
  readonly pdfkitText?: boolean;
  /** pdfkit opens and parses the fonts for this document alone (pdf-fonts.ts) */
  readonly pdfkitFonts?: boolean;
  /**
   * Awaited once the PDF is whole, before it takes its name; if it throws, the PDF is not kept (a statement's
   * PDF, written beside its workbook, is kept only once the workbook is: statement-job.ts).
   */
  readonly beforeRename?: () => Promise<unknown>;
}

/** A new pdfkit document writing to a temp file beside `file`, with the fonts registered. */
function openPdf(file: string, docTitle: string, header: StatementHeader, opts: PdfOptions) {
  const lang = header.language;
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.partial`);
  const PDFDocument = pdfkit();
  const doc = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margin: MARGIN,
    lang: lang === 'uk' ? 'uk-UA' : 'en-GB',
    info: {
      Title: docTitle,
      ...(header.issuer.name ? { Author: header.issuer.name } : {}),
      CreationDate: header.issuedAt,
      ModDate: header.issuedAt,
    },
  }) as Doc;
  if (opts.pdfkitFonts) fontsOpenedByPdfkit(doc);
  // the bytes read once a process (pdfkit reads a path again for every document)
  for (const [name, file] of Object.entries(FONT_FILES))
    doc.registerFont(name, opts.pdfkitFonts ? file : fontBytes(file));
  if (opts.pdfkitText) cellsThroughPdfkit(doc);
  // each font is opened by pdfkit when first used, in the document's order (its object numbers stay theirs)
  const font = doc.font.bind(doc);
  doc.font = ((...args: Parameters<typeof font>) => {
    font(...args);
    const file = typeof args[0] === 'string' ? FONT_FILES[args[0]] : undefined;
    if (file) shareParsedFont(doc, doc._font as never, file);
    if (!opts.shapeEveryWord) layFiguresByCharacter(doc._font);
    boundLayoutCache(doc._font);
    return doc;
  }) as typeof doc.font;
  const out = createWriteStream(temp, { highWaterMark: MAX_PENDING_BYTES });
  const finished = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
    doc.on('error', reject);
  });
  // awaited at the end or by `drained`; a file that fails at its open must not be an unhandled rejection first
  finished.catch(() => undefined);
  doc.pipe(out);
  /**
   * pdfkit pushes its pages whatever the file takes, and the pipe moves them on only between turns of the
   * event loop: a table written faster than that would be held whole in memory until the end.
   */
  const drained = async () => {
    await yieldToIo();
    while ((doc as unknown as { readableLength: number }).readableLength > MAX_PENDING_BYTES) {
      // a file that failed (at its open: a name too long, a directory gone) takes nothing more: the pages would
      // pile up unread and this wait would never end
      if (out.destroyed) {
        await finished;
        throw new Error(`the PDF's file closed before the statement was written: ${temp}`);
      }
      await Promise.race([
        finished,
        out.writableNeedDrain ? once(out, 'drain') : new Promise((resolve) => setTimeout(resolve, 1)),
      ]);
    }
  };
  return { doc, temp, finished, drained };
}

// PDF bytes waiting for the file before more lines are written
const MAX_PENDING_BYTES = 1 << 20;

export async function writeStatementPdf(
  file: string,
  src: StatementSource,
  meta: StatementMeta,
  header: StatementHeader,
  opts: PdfOptions = {},
): Promise<void> {
  const figures = [...src.figures].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
  if (!figures[0]) throw new RangeError('a statement needs figures for at least one currency');
  const t = LABELS[header.language];
  const lang = header.language;
  const docTitle = statementTitle(figures, meta, header);
  const { doc, temp, finished, drained } = openPdf(file, docTitle, header, opts);
  const footers = pageFooters(doc, docTitle, t);
  const money = (minor: bigint, currency: string) => formatAmount(minor, currency, lang);
  const ctx: Ctx = { doc, t, lang, money, day: (d) => dayText(d, lang), drained };
  try {
    title(doc, figures, meta, header);
    bridgeTables(ctx, src, figures);
    payoutSections(ctx, src, figures, meta);
    await operationSections(ctx, src, figures, meta);
    contactNotes(ctx, header);
    footers.finish();
    doc.end();
    await finished;
    await opts.beforeRename?.();
    renameSync(temp, file);
  } catch (e) {
    doc.end();
    await finished.catch(() => undefined);
    rmSync(temp, { force: true });
    throw e;
  }
}

/**
 * The bridge from opening to closing, three currencies a table so that every column fits the page's width. A
 * label wider than its column goes on as many lines as it needs, its amounts on the first (a label cut with "…"
 * would not say what the amount is).
 */
function bridgeTables({ doc, lang, money, t }: Ctx, src: StatementSource, figures: readonly StatementFigures[]) {
  const payoutOf = (currency: string) => src.payouts?.find((p) => p.currency === currency);
  const LABEL_WIDTH = 430;
  for (let i = 0; i < figures.length; i += 3) {
    const group = figures.slice(i, i + 3);
    if (i > 0) doc.moveDown(0.8);
    const bold = new Set<readonly string[]>();
    const rows = bridgeOf(figures, src.payouts).map((line): RowLines => {
      const label = pdfBridgeLabel(line, lang);
      const strong = label.startsWith('=') || /^(Closing|Кінцеве)/.test(label);
      doc.font(strong ? 'bold' : 'regular').fontSize(8);
      const [first = '', ...rest] = wrapped(doc, label, LABEL_WIDTH - 4);
      const amounts = group.map((f) => money(line.value(f, payoutOf(f.currency)), f.currency));
      const lines = [[first, ...amounts], ...rest.map((r) => [r, ...amounts.map(() => '')])];
      if (strong) for (const l of lines) bold.add(l);
      return lines;
    });
    const columns = [
      { header: t.bridge, width: LABEL_WIDTH },
      ...group.map((f) => ({ header: f.currency, width: 110, align: 'right' as const })),
    ];
    // a bridge is read whole: on the next page when it does not fit on this one
    roomFor(doc, tableStart(rows.reduce((n, r) => n + r.length, 0)));
    table(doc, columns, rows, (row) => bold.has(row));
  }
}

/** Whom to ask and where to dispute, at the end. */
function contactNotes({ doc, t }: Ctx, header: StatementHeader): void {
  const notes = [
    header.contact ? `${t.contact}: ${header.contact}` : '',
    header.dispute ? `${t.disputes}: ${header.dispute}` : '',
  ].filter(Boolean);
  if (!notes.length) return;
  doc.moveDown();
  doc.font('regular').fontSize(8);
  const width = PAGE.width - 2 * MARGIN;
  roomFor(doc, doc.heightOfString(notes.join('\n'), { width }));
  doc.text(notes.join('\n'), MARGIN, doc.y, { width });
}

interface Ctx {
  readonly doc: Doc;
  readonly t: Labels;
  readonly lang: 'en' | 'uk';
  readonly money: (minor: bigint, currency: string) => string;
  readonly day: (d: string | Date) => string;
  /** waits while the pages written are more than the file has taken */
  readonly drained: () => Promise<void>;
}

/** Held items, paid-out lines, the reserve schedule with its balance and releases to come. */
function payoutSections(
  ctx: Ctx,
  src: StatementSource,
  figures: readonly StatementFigures[],
  meta: StatementMeta,
): void {
  const { doc, t, money, day } = ctx;
  heldTable(ctx, src.payouts ?? [], meta.timezone);
  const paid = (src.payouts ?? []).flatMap((p) => p.paid);
  heading(doc, t.paidOutSheet, tableStart(1));
  table(
    doc,
    [
      { header: t.bookedOn, width: 110 },
      { header: t.reference, width: 300 },
      { header: t.amountPaid, width: 150, align: 'right' },
    ],
    (paid.length
      ? paid.map((l) => [day(l.bookingDate), l.reference, `${money(l.amount, l.currency)} ${l.currency}`])
      : [[t.none, '', '']]
    ).map((r) => [r]),
  );
  const coming = releasesToCome(src.reserve, meta);
  const balance = new Map<string, bigint>();
  for (const c of coming) balance.set(c.currency, (balance.get(c.currency) ?? 0n) + c.amount);
  // the balance lines under the schedule, kept on its last row's page
  doc.font('bold').fontSize(9);
  const balanceLines = figures.length * doc.currentLineHeight(true);
  doc.font('regular').fontSize(8);
  const balanceHeight = 0.5 * doc.currentLineHeight(true) + balanceLines;
  heading(doc, t.reserveSheet, tableStart(1) + (src.reserve.length > 1 ? 0 : balanceHeight));
  table(
    doc,
    [
      { header: t.heldOn, width: 110 },
      { header: t.currency, width: 70 },
      { header: t.held, width: 120, align: 'right' },
      { header: t.releaseOn, width: 110, align: 'right' },
      { header: t.released, width: 120, align: 'right' },
    ],
    [
      ...src.reserve.map((r) => [
        [day(r.heldOn), r.currency, money(r.held, r.currency), day(r.releaseOn), money(r.released, r.currency)],
      ]),
      ...(src.reserve.length === 0 ? [[[t.none]]] : []),
    ],
    undefined,
    balanceHeight,
  );
  doc.moveDown(0.5);
  roomFor(doc, balanceLines);
  for (const f of figures)
    doc
      .font('bold')
      .fontSize(9)
      .text(`${t.reserveBalance}: ${money(balance.get(f.currency) ?? 0n, f.currency)} ${f.currency}`, MARGIN);
  if (coming.length) {
    heading(doc, t.releasesToCome, tableStart(1));
    table(
      doc,
      [
        { header: t.releaseOn, width: 110 },
        { header: t.currency, width: 70 },
        { header: t.reserve, width: 120, align: 'right' },
      ],
      coming.map((c) => [[day(c.releaseOn), c.currency, money(c.amount, c.currency)]]),
    );
  }
}

// Lines between two looks at the pages waiting for the file (openPdf's drained).
const LINES_PER_YIELD = 2000;

/**
 * Every operation line, a table per currency, each row drawn as its line is read: neither the lines nor the
 * pages written so far are held (a statement of any length writes in the same memory).
 */
async function operationSections(
  { doc, t, lang, money, drained }: Ctx,
  src: StatementSource,
  figures: readonly StatementFigures[],
  meta: StatementMeta,
): Promise<void> {
  for (const f of figures) {
    // the header, a first row, the total and the fee not split: a table never starts at a page's foot
    heading(doc, `${t.operationsIn(f.currency)} (${t.timeZone} ${meta.timezone})`, tableStart(3));
    const sum = { share: 0n, fee: 0n, fixed: 0n, percent: 0n, notSplit: 0n, reserve: 0n, net: 0n };
    const at = minuteText(meta.timezone, lang);
    const rows = tableWriter(doc, OPERATION_COLUMNS(t), (row) => row[0] === t.total);
    let n = 0;
    // a row is drawn once the next is read, so that the last goes to the page of the total
    let last: string[] | undefined;
    for await (const l of src.lines(f.currency)) {
      addLine(sum, l);
      if (last) rows(last);
      last = [
        at(l.at),
        l.orderId ?? '',
        operationWord(l.method, lang),
        operationWord(l.status, lang),
        paymentMethodWords(l.paidWith, lang),
        money(l.share, f.currency),
        money(l.fee, f.currency),
        l.feeParts ? `${money(l.feeParts.fixed, f.currency)} + ${money(l.feeParts.percent, f.currency)}` : '',
        money(l.reserve, f.currency),
        money(l.net, f.currency),
      ];
      if (++n % LINES_PER_YIELD === 0) await drained();
    }
    const notSplit = sum.notSplit !== 0n && sum.notSplit !== sum.fee ? ROW_HEIGHT : 0;
    if (last) rows(last, 1, ROW_HEIGHT + notSplit);
    rows(n ? feeSummaryRow(sum, t, (v) => money(v, f.currency)) : [t.none], 1, notSplit);
    doc.x = MARGIN;
    if (notSplit) {
      doc.font('regular').fontSize(8);
      roomFor(doc, ROW_HEIGHT);
      doc.text(`${t.feeNotSplit}: ${money(sum.notSplit, f.currency)}`, MARGIN, doc.y);
    }
  }
}

const OPERATION_COLUMNS = (t: Labels): Column[] => [
  { header: t.date, width: 78 },
  { header: t.order, width: 92 },
  { header: t.method, width: 86 },
  { header: t.status, width: 58 },
  { header: t.paidWith, width: 112 },
  { header: t.share, width: 70, align: 'right' },
  { header: t.fee, width: 60, align: 'right' },
  { header: t.feeParts, width: 84, align: 'right' },
  { header: t.reserve, width: 54, align: 'right' },
  { header: t.net, width: 66, align: 'right' },
];

/**
 * A line's time in the statement's zone to the minute, as luxon writes it (`yyyy-MM-dd HH:mm`, in Ukrainian
 * `dd.MM.yyyy HH:mm`). The local time is the workbook's (createLocalTime: the zone's offset found once a day, and
 * at each instant of a day the offset changes), written out by hand: luxon's own resolves the offset and reads
 * the format again for every instant. A year luxon would write otherwise (before 1000, after 9999) is left to it.
 */
export function minuteText(timezone: string, lang: 'en' | 'uk'): (at: Date) => string {
  const format = lang === 'uk' ? 'dd.MM.yyyy HH:mm' : 'yyyy-MM-dd HH:mm';
  const local = createLocalTime(timezone);
  const two = (n: number) => (n < 10 ? `0${n}` : String(n));
  return (at) => {
    const l = local(at);
    const year = l.getUTCFullYear();
    if (!(year >= 1000 && year <= 9999)) return DateTime.fromJSDate(at, { zone: timezone }).toFormat(format);
    const [month, day] = [two(l.getUTCMonth() + 1), two(l.getUTCDate())];
    const time = `${two(l.getUTCHours())}:${two(l.getUTCMinutes())}`;
    return lang === 'uk' ? `${day}.${month}.${year} ${time}` : `${year}-${month}-${day} ${time}`;
  };
}

/** The table's total: the fee's parts beside the fee, so fixed + percentage + not split = the fee's total. */
function feeSummaryRow(
  sum: { share: bigint; fee: bigint; fixed: bigint; percent: bigint; reserve: bigint; net: bigint },
  t: Labels,
  money: (v: bigint) => string,
): string[] {
  const parts = sum.fixed !== 0n || sum.percent !== 0n ? `${money(sum.fixed)} + ${money(sum.percent)}` : '';
  return [t.total, '', '', '', '', money(sum.share), money(sum.fee), parts, money(sum.reserve), money(sum.net)];
}

function dayText(d: string | Date, language: 'en' | 'uk'): string {
  const iso = typeof d === 'string' ? d.slice(0, 10) : DateTime.fromJSDate(d, { zone: 'UTC' }).toISODate()!;
  return writtenDay(iso, language);
}

/** The head of the first page: issuer left, title, number, date and period right, then the sub-merchant. */
function title(
  doc: PDFKit.PDFDocument,
  figures: readonly StatementFigures[],
  meta: StatementMeta,
  header: StatementHeader,
): void {
  const t = LABELS[header.language];
  const width = (PAGE.width - 2 * MARGIN) / 2;
  const top = MARGIN;
  doc
    .font('bold')
    .fontSize(10)
    .text(header.issuer.name ?? '—', MARGIN, top, { width });
  doc.font('regular').fontSize(8);
  if (header.issuer.address) doc.text(header.issuer.address, { width });
  if (header.issuer.taxId) doc.text(`${t.taxId}: ${header.issuer.taxId}`, { width });
  const leftEnd = doc.y;
  doc
    .font('bold')
    .fontSize(16)
    .text(t.title, MARGIN + width, top, { width, align: 'right' });
  doc.font('regular').fontSize(9);
  const rows = new Map(headerRows(figures, meta, header));
  for (const l of [
    rows.get(t.title),
    `${t.period}: ${rows.get(t.period)}`,
    `${t.issuedOn}: ${dayText(String(rows.get(t.issuedOn)), header.language)}`,
    rows.has(t.corrects) && `${t.corrects}: ${String(rows.get(t.corrects))}`,
  ])
    if (l) doc.text(String(l), { width, align: 'right' });
  doc.y = Math.max(leftEnd, doc.y) + 14;
  doc.font('regular').fontSize(8).text(t.recipient, MARGIN, doc.y, { width });
  doc
    .font('bold')
    .fontSize(10)
    .text(String(rows.get(t.recipient)), { width });
  doc.font('regular').fontSize(8);
  for (const k of [t.accountId, t.taxId, t.address])
    if (rows.has(k)) doc.text(`${k}: ${String(rows.get(k))}`, { width });
  doc.text(`${t.openingFrom}: ${String(rows.get(t.openingFrom))}`, { width: PAGE.width - 2 * MARGIN });
  doc.moveDown(1.2);
}

/**
 * Held items by order, payment, date, amount and reason in words; a reason too long for its column goes on
 * as many lines as it needs (a reason cut short would not say why).
 */
function heldTable({ doc, t, lang, money, day }: Ctx, payouts: readonly HeldByCurrency[], timezone: string) {
  const columns: Column[] = [
    { header: t.order, width: 120 },
    { header: t.payment, width: 185 },
    { header: t.day, width: 60 },
    { header: t.amountHeld, width: 105, align: 'right' },
    { header: t.reason, width: 290 },
  ];
  doc.font('regular').fontSize(8);
  const rows = heldLines(payouts, timezone).map((h): RowLines => {
    const [first = '', ...rest] = wrapped(doc, holdReason(h.reason, lang), 290 - 4);
    return [
      [
        h.orderId ?? '—',
        h.paymentId ?? '—',
        h.day ? day(h.day) : '—',
        `${money(h.amount, h.currency)} ${h.currency}`,
        first,
      ],
      ...rest.map((r) => ['', '', '', '', r]),
    ];
  });
  heading(doc, t.heldSheet, tableStart(rows[0]?.length ?? 1));
  table(doc, columns, rows.length ? rows : [[[t.none, '', '', '', '']]]);
}

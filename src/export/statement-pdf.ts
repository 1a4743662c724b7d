import { randomBytes } from 'node:crypto';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DateTime } from 'luxon';
import PDFDocument from 'pdfkit';
import { bridgeOf, type StatementMeta, type StatementSource } from './statement-workbooks';
import { currencyExponent } from './xlsx';

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

export interface StatementParty {
  readonly name: string;
  readonly lines: readonly string[];
}

export interface PdfStatementHeader {
  /** the marketplace issuing the statement: legal name, then address, tax id… */
  readonly issuer: StatementParty;
  /** the sub-merchant: legal name, then address, tax id… */
  readonly recipient: StatementParty;
  readonly statementNumber: string | null;
  /** the day of issue in the business time zone (YYYY-MM-DD) */
  readonly issuedOn: string;
  /** contact and dispute text printed at the end */
  readonly footer: string | null;
}

/** Exact major-unit text of minor units, grouped by thousands: 123456n EUR → "1,234.56". */
export function formatAmount(minor: bigint, currency: string): string {
  const exp = currencyExponent(currency);
  const negative = minor < 0n;
  let digits = (negative ? -minor : minor).toString();
  // recon keeps every amount in hundredths; a currency with another exponent is shown with its own
  const scaled =
    exp === 2 ? digits : exp > 2 ? digits + '0'.repeat(exp - 2) : digits.slice(0, digits.length - (2 - exp)) || '0';
  digits = scaled.padStart(exp + 1, '0');
  const whole = digits.slice(0, digits.length - exp).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const frac = exp > 0 ? `.${digits.slice(digits.length - exp)}` : '';
  return `${negative ? '−' : ''}${whole}${frac}`;
}

const MARGIN = 40;
const PAGE = { width: 841.89, height: 595.28 }; // A4 landscape, in points

interface Column {
  readonly header: string;
  readonly width: number;
  readonly align?: 'left' | 'right';
}

export async function writeStatementPdf(
  file: string,
  src: StatementSource,
  meta: StatementMeta,
  header: PdfStatementHeader,
): Promise<void> {
  const figures = [...src.figures].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
  const first = figures[0];
  if (!first) throw new RangeError('a statement needs figures for at least one currency');
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.partial`);
  const doc = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margin: MARGIN,
    info: {
      Title: `Payout statement ${meta.month} — ${header.recipient.name}`,
      Author: header.issuer.name,
      CreationDate: DateTime.fromISO(header.issuedOn, { zone: 'UTC' }).toJSDate(),
    },
  });
  doc.registerFont('regular', REGULAR);
  doc.registerFont('bold', BOLD);
  const out = createWriteStream(temp);
  const finished = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
    doc.on('error', reject);
  });
  doc.pipe(out);
  let page = 1;
  const footer = () => {
    const y = PAGE.height - MARGIN + 10;
    const { x: keepX, y: keepY } = doc;
    // written inside the bottom margin, which would otherwise make pdfkit open a new page
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc.font('regular').fontSize(7).fillColor('#555');
    doc.text(`Payout statement ${meta.month} · ${header.recipient.name} · page ${page}`, MARGIN, y, {
      width: PAGE.width - 2 * MARGIN,
      align: 'center',
      lineBreak: false,
    });
    doc.fillColor('black');
    doc.page.margins.bottom = bottom;
    doc.x = keepX;
    doc.y = keepY;
  };
  doc.on('pageAdded', () => {
    page++;
  });
  try {
    title(doc, meta, header);
    footer();
    table(
      doc,
      [
        { header: 'Payout bridge', width: 330 },
        ...figures.map((f) => ({ header: f.currency, width: 110, align: 'right' as const })),
      ],
      bridgeOf(figures).map((line) => [
        line.label,
        ...figures.map((f) =>
          formatAmount(
            line.value(
              f,
              src.payouts?.find((p) => p.currency === f.currency),
            ),
            f.currency,
          ),
        ),
      ]),
      footer,
      (row) => row[0]!.startsWith('=') || row[0]!.startsWith('Closing'),
    );
    if (src.reserve.length > 0) {
      heading(doc, 'Reserve', footer);
      table(
        doc,
        [
          { header: 'Held on', width: 90 },
          { header: 'Currency', width: 60 },
          { header: 'Held', width: 110, align: 'right' },
          { header: 'Release on', width: 90 },
          { header: 'Released', width: 110, align: 'right' },
        ],
        src.reserve.map((r) => [
          dayText(r.heldOn),
          r.currency,
          formatAmount(r.held, r.currency),
          dayText(r.releaseOn),
          formatAmount(r.released, r.currency),
        ]),
        footer,
      );
    }
    for (const f of figures) {
      heading(doc, `Operations in ${f.currency}`, footer);
      const rows: string[][] = [];
      for await (const l of src.lines(f.currency)) {
        rows.push([
          DateTime.fromJSDate(l.at, { zone: meta.timezone }).toFormat('yyyy-MM-dd HH:mm'),
          l.orderId ?? '',
          l.method,
          l.status,
          formatAmount(l.share, f.currency),
          formatAmount(l.fee, f.currency),
          formatAmount(l.reserve, f.currency),
          formatAmount(l.net, f.currency),
        ]);
      }
      table(
        doc,
        [
          { header: `Date (${meta.timezone})`, width: 100 },
          { header: 'Order', width: 170 },
          { header: 'Method', width: 70 },
          { header: 'Status', width: 60 },
          { header: 'Share', width: 95, align: 'right' },
          { header: 'Fee', width: 85, align: 'right' },
          { header: 'Reserve', width: 85, align: 'right' },
          { header: 'Net', width: 95, align: 'right' },
        ],
        rows,
        footer,
      );
    }
    if (header.footer) {
      doc.moveDown();
      doc
        .font('regular')
        .fontSize(8)
        .text(header.footer, MARGIN, doc.y, { width: PAGE.width - 2 * MARGIN });
    }
    doc.end();
    await finished;
    renameSync(temp, file);
  } catch (e) {
    doc.end();
    await finished.catch(() => undefined);
    rmSync(temp, { force: true });
    throw e;
  }
}

function dayText(d: string | Date): string {
  return typeof d === 'string' ? d.slice(0, 10) : DateTime.fromJSDate(d, { zone: 'UTC' }).toISODate()!;
}

function title(doc: PDFKit.PDFDocument, meta: StatementMeta, header: PdfStatementHeader): void {
  const width = (PAGE.width - 2 * MARGIN) / 2;
  const top = MARGIN;
  doc.font('bold').fontSize(10).text(header.issuer.name, MARGIN, top, { width });
  doc.font('regular').fontSize(8);
  for (const l of header.issuer.lines) doc.text(l, { width });
  const leftEnd = doc.y;
  doc
    .font('bold')
    .fontSize(16)
    .text('Payout statement', MARGIN + width, top, { width, align: 'right' });
  doc.font('regular').fontSize(9);
  const [y, m] = meta.month.split('-');
  const period = DateTime.fromObject({ year: Number(y), month: Number(m), day: 1 }, { zone: meta.timezone });
  for (const l of [
    header.statementNumber ? `Statement no. ${header.statementNumber}` : null,
    `Period: ${period.toFormat('d LLLL yyyy')} – ${period.endOf('month').toFormat('d LLLL yyyy')} (${meta.timezone})`,
    `Issued on: ${header.issuedOn}`,
  ])
    if (l) doc.text(l, { width, align: 'right' });
  doc.y = Math.max(leftEnd, doc.y) + 14;
  doc.font('bold').fontSize(10).text(header.recipient.name, MARGIN, doc.y, { width });
  doc.font('regular').fontSize(8);
  for (const l of header.recipient.lines) doc.text(l, { width });
  doc.moveDown(1.2);
}

function heading(doc: PDFKit.PDFDocument, text: string, footer: () => void): void {
  if (doc.y > PAGE.height - MARGIN - 80) newPage(doc, footer);
  doc.moveDown(0.8);
  doc.font('bold').fontSize(11).text(text, MARGIN, doc.y);
  doc.moveDown(0.3);
}

function newPage(doc: PDFKit.PDFDocument, footer: () => void): void {
  doc.addPage();
  footer();
  doc.x = MARGIN;
  doc.y = MARGIN;
}

const ROW_HEIGHT = 13;

function table(
  doc: PDFKit.PDFDocument,
  columns: readonly Column[],
  rows: readonly string[][],
  footer: () => void,
  bold: (row: readonly string[]) => boolean = () => false,
): void {
  const drawHeader = () => {
    let x = MARGIN;
    const top = doc.y;
    doc.font('bold').fontSize(8);
    for (const c of columns) {
      doc.text(c.header, x + 2, top, { width: c.width - 4, align: c.align ?? 'left', lineBreak: false });
      x += c.width;
    }
    const y = top + ROW_HEIGHT - 2;
    doc
      .moveTo(MARGIN, y)
      .lineTo(MARGIN + columns.reduce((s, c) => s + c.width, 0), y)
      .lineWidth(0.5)
      .stroke();
    doc.y = y + 3;
  };
  drawHeader();
  for (const row of rows) {
    if (doc.y + ROW_HEIGHT > PAGE.height - MARGIN - 10) {
      newPage(doc, footer);
      drawHeader();
    }
    const y = doc.y;
    let x = MARGIN;
    doc.font(bold(row) ? 'bold' : 'regular').fontSize(8);
    columns.forEach((c, i) => {
      doc.text(row[i] ?? '', x + 2, y, {
        width: c.width - 4,
        align: c.align ?? 'left',
        lineBreak: false,
        ellipsis: true,
      });
      x += c.width;
    });
    doc.y = y + ROW_HEIGHT;
  }
  doc.x = MARGIN;
}

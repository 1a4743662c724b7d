import type { Labels } from '../i18n/labels';
import { cell, cellsOfRow, type Doc, textOperators } from './pdf-cells';

/**
 * A statement PDF's pages: the footer of every page, headings and tables that break to a new page as a printed
 * document does. A heading moves to the next page with its table's header and first row; a table continued on a
 * new page repeats its header; the lines of one row (a long reason, a long label) stay on one page, and a total
 * stays with the row above it.
 */

export const MARGIN = 40;
export const PAGE = { width: 841.89, height: 595.28 }; // A4 landscape, in points
export const ROW_HEIGHT = 13;
// where a table's rows end, above the footer
const BOTTOM = PAGE.height - MARGIN - 10;
// the most a page holds below its top margin
const PAGE_ROOM = BOTTOM - MARGIN;

export interface Column {
  readonly header: string;
  readonly width: number;
  readonly align?: 'left' | 'right';
}

/** Lines of a table that are one row (a label or a reason on several lines): never split across pages. */
export type RowLines = readonly (readonly string[])[];

interface PdfReference {
  data: Record<string, unknown>;
  end(chunk?: string): void;
}

/**
 * Every page's footer: the document's title and "Page N of M". M is known only once the last page is written,
 * and each page goes to the file as it fills, so a page draws a form of its own whose text is written at the end
 * (`finish`, before `doc.end()`). A page pdfkit adds itself (a text run past the bottom) gets its footer too.
 */
export function pageFooters(doc: Doc, docTitle: string, t: Labels): { finish: () => void } {
  const forms: PdfReference[] = [];
  const stamp = () => {
    const form = (doc as unknown as { ref(data: object): PdfReference }).ref({
      Type: 'XObject',
      Subtype: 'Form',
      BBox: [0, 0, PAGE.width, PAGE.height],
    });
    forms.push(form);
    const name = `Footer${forms.length}`;
    (doc.page as unknown as { xobjects: Record<string, unknown> }).xobjects[name] = form;
    doc.addContent(`q\n/${name} Do\nQ`);
  };
  stamp();
  doc.on('pageAdded', stamp);
  const finish = () => {
    doc.removeListener('pageAdded', stamp);
    const { x: keepX, y: keepY } = doc;
    doc.font('regular').fontSize(7);
    const font = doc._font!;
    forms.forEach((form, i) => {
      const text = `${docTitle} · ${t.pageOf.replace('&P', String(i + 1)).replace('&N', String(forms.length))}`;
      const x = MARGIN + Math.max(0, (PAGE.width - 2 * MARGIN - doc.widthOfString(text)) / 2);
      form.data.Resources = { Font: { [font.id]: font.ref() } };
      form.end(`0.333333 0.333333 0.333333 rg\n${textOperators(doc, text, x, PAGE.height - MARGIN + 10)}`);
    });
    doc.x = keepX;
    doc.y = keepY;
  };
  return { finish };
}

export function newPage(doc: PDFKit.PDFDocument): void {
  doc.addPage();
  doc.x = MARGIN;
  doc.y = MARGIN;
}

/** A new page when `height` more would run into the bottom margin (where pdfkit would add one itself). */
export function roomFor(doc: PDFKit.PDFDocument, height: number): void {
  if (doc.y + height > BOTTOM) newPage(doc);
}

/**
 * A section's heading, on a new page unless `keep` points more fit below it on this one (its table's header and
 * first row: a heading alone at a page's foot, its rows on the next, reads as a section with nothing in it).
 */
export function heading(doc: PDFKit.PDFDocument, text: string, keep: number): void {
  const gap = 0.8 * doc.currentLineHeight(true);
  doc.font('bold').fontSize(11);
  const height = gap + doc.heightOfString(text) + 0.3 * doc.currentLineHeight(true);
  if (doc.y + Math.min(height + keep, PAGE_ROOM) > BOTTOM) newPage(doc);
  doc.y += gap;
  doc.text(text, MARGIN, doc.y);
  doc.moveDown(0.3);
}

/** What a table needs below a heading for its header and its first row of `lines` lines. */
export const tableStart = (lines: number): number => ROW_HEIGHT * (1 + lines);

/**
 * A table of rows of one or more lines. `trailing` points follow the table and stay on its last row's page (a
 * balance under a schedule).
 */
export function table(
  doc: Doc,
  columns: readonly Column[],
  rows: readonly RowLines[],
  bold: (row: readonly string[]) => boolean = () => false,
  trailing = 0,
): void {
  const write = tableWriter(doc, columns, bold);
  rows.forEach((lines, i) => {
    const end = i === rows.length - 1 ? trailing : 0;
    lines.forEach((l, j) => {
      if (j === 0) write(l, lines.length, end);
      else write(l);
    });
  });
  doc.x = MARGIN;
}

/**
 * A table's header drawn now; each row given to the writer drawn below it, on a new page (header again) when it
 * and the `keep - 1` rows after it, and `extra` points, do not fit on this one.
 */
export function tableWriter(
  doc: Doc,
  columns: readonly Column[],
  bold: (row: readonly string[]) => boolean = () => false,
): (row: readonly string[], keep?: number, extra?: number) => void {
  const drawHeader = () => {
    let x = MARGIN;
    const top = doc.y;
    doc.font('bold').fontSize(8);
    for (const c of columns) {
      cell(doc, c.header, x + 2, top, c.width - 4, c.align ?? 'left');
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
  return (row, keep = 1, extra = 0) => {
    if (doc.y + Math.min(keep * ROW_HEIGHT + extra, PAGE_ROOM - ROW_HEIGHT) > BOTTOM) {
      newPage(doc);
      drawHeader();
    }
    const y = doc.y;
    doc.font(bold(row) ? 'bold' : 'regular').fontSize(8);
    cellsOfRow(doc, () => {
      let x = MARGIN;
      for (let i = 0; i < columns.length; i++) {
        const c = columns[i]!;
        cell(doc, row[i] ?? '', x + 2, y, c.width - 4, c.align ?? 'left');
        x += c.width;
      }
    });
    doc.y = y + ROW_HEIGHT;
  };
}

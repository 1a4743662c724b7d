/**
 * Text a spreadsheet could read as a formula, for the CSV and workbook writers: = + - @ start one in Excel and
 * LibreOffice; a tab or CR is used to smuggle one past filters; and blanks before them count too, as LibreOffice's
 * CSV import (its "Trim spaces" option) and people pasting a cell trim them away.
 */
const FORMULA_START = /^(?:[\t\r]|\s*[=+\-@])/;

/** `text` with a leading apostrophe where a spreadsheet could take it for a formula, else as it is. */
export const defuseFormula = (text: string): string => (FORMULA_START.test(text) ? `'${text}` : text);

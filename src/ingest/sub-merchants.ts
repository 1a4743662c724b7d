import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { eventIdFor } from '../events/ids';
import { stableStringify } from '../canonical';
import { normalizeAccountId } from '../config/bank';
import { DEFAULT_RESERVE_HOLD_DAYS, SubMerchantRegistered, subMerchantStream } from '../events/ledger-events';
import type { AppendRequest, EventStore, NewEvent } from '../store/types';
import { type CsvRecord, parseCsvRecords } from './csv-records';
import { checkText, NAME_TEXT, quoteForMessage, type TextPolicy } from '../input-rules';
import { statementFileStem } from '../statement-file-names';

/**
 * The sub-merchant directory: CSV files with columns `sub_merchant_id,name,reserve_hold_days` (header
 * required, any column order, RFC 4180 quoting). `name` is what the register gives as `receiverName`.
 * Importing appends a `SubMerchantRegistered` event per new or changed row; the projections read the
 * directory from those events only.
 */

export interface SubMerchantRow {
  readonly subMerchantId: string;
  readonly name: string;
  readonly reserveHoldDays: number;
  /** optional column `payout_account`: where payouts are sent (IBAN or account number), matched against bank debits */
  readonly payoutAccount?: string;
  /** optional column `payout_bic`: the BIC of the bank holding the payout account (needed for one that is not an IBAN) */
  readonly payoutBic?: string;
  /** optional column `email`: where statements are e-mailed */
  readonly email?: string;
  /** optional columns printed on statements: `legal_name`, `tax_id`, `address`, `language` (uk or en) */
  readonly legalName?: string;
  readonly taxId?: string;
  readonly address?: string;
  readonly language?: 'uk' | 'en';
  /** where the row came from, for messages */
  readonly file: string;
  readonly line: number;
}

export interface CsvIssue {
  readonly file: string;
  readonly line: number;
  readonly column: string | null;
  readonly message: string;
}

export type DirectoryResult = { ok: true; rows: SubMerchantRow[] } | { ok: false; issues: CsvIssue[] };

export const DIRECTORY_COLUMNS = ['sub_merchant_id', 'name', 'reserve_hold_days'] as const;
/** columns a directory file may have besides DIRECTORY_COLUMNS */
export const OPTIONAL_DIRECTORY_COLUMNS = [
  'payout_account',
  'payout_bic',
  'email',
  'legal_name',
  'tax_id',
  'address',
  'language',
] as const;

/**
 * The statement columns: printed text, one line each, checked by the shared rules (src/input-rules.ts): no NUL,
 * lone surrogate, control character (CR and LF among them) or bidirectional override, and bounded in length, so
 * that none can print extra lines, reorder a line or run for pages on a statement or an e-mail.
 */
const TEXT_COLUMNS = [
  ['legal_name', 'legalName', 200],
  ['tax_id', 'taxId', 40],
  ['address', 'address', 300],
] as const;

const NAME_POLICY = `a name is one line of at most ${NAME_TEXT.maxLength} characters, without control characters or bidirectional overrides`;
const EMAIL_TEXT: TextPolicy = { maxLength: 254, refuseBidi: true };

export function formatCsvIssue(i: CsvIssue): string {
  return `${i.file}:${i.line}${i.column ? ` (column ${i.column})` : ''}: ${i.message}`;
}

/** RFC 4180 records by csv-parse (src/ingest/csv-records.ts), here as the fee contract has always found them. */
export { parseCsvRecords };

type DirectoryColumn = (typeof DIRECTORY_COLUMNS)[number] | (typeof OPTIONAL_DIRECTORY_COLUMNS)[number];

/**
 * One directory file. Every problem is reported (file, line, column), not only the first: the header, then
 * each record with each of its columns checked.
 */
export function parseSubMerchantCsv(text: string, file: string): DirectoryResult {
  const parsed = parseCsvRecords(text);
  if (!parsed.ok) return { ok: false, issues: [{ file, line: parsed.line, column: null, message: parsed.message }] };
  const [header, ...records] = parsed.records;
  const names = header ? header.fields.map((h) => h.trim().toLowerCase()) : [];
  const refused = headerIssue(names, header?.line, file);
  if (refused) return { ok: false, issues: [refused] };
  const issues: CsvIssue[] = [];
  const rows: SubMerchantRow[] = [];
  for (const r of records) {
    const row = rowOf(r, names, file, issues);
    if (row) rows.push(row);
  }
  return issues.length ? { ok: false, issues } : { ok: true, rows };
}

/** The header's problem, if any: absent, a required column missing, an unknown column, a column twice. */
function headerIssue(names: readonly string[], line: number | undefined, file: string): CsvIssue | null {
  if (line === undefined)
    return { file, line: 1, column: null, message: `empty file: a header ${DIRECTORY_COLUMNS.join(',')} is required` };
  const known: readonly string[] = [...DIRECTORY_COLUMNS, ...OPTIONAL_DIRECTORY_COLUMNS];
  const unknown = names.filter((n) => !known.includes(n));
  const missing = DIRECTORY_COLUMNS.filter((c) => !names.includes(c));
  if (missing.length || unknown.length) {
    const parts = [
      missing.length ? `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` : '',
      unknown.length
        ? `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => JSON.stringify(u)).join(', ')}`
        : '',
    ].filter(Boolean);
    return { file, line, column: null, message: `header must be ${DIRECTORY_COLUMNS.join(',')}: ${parts.join('; ')}` };
  }
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  return dup ? { file, line, column: dup, message: 'column appears twice in the header' } : null;
}

/** One record's row, or null with its problems added to `issues` (every column checked). */
function rowOf(r: CsvRecord, names: readonly string[], file: string, issues: CsvIssue[]): SubMerchantRow | null {
  if (r.fields.length !== names.length) {
    issues.push({
      file,
      line: r.line,
      column: null,
      message: `expected ${names.length} fields, found ${r.fields.length}`,
    });
    return null;
  }
  const before = issues.length;
  const bad = (column: DirectoryColumn, message: string) => issues.push({ file, line: r.line, column, message });
  const cell = (c: DirectoryColumn) => (names.includes(c) ? r.fields[names.indexOf(c)]!.trim() : '');
  const id = checkId(cell('sub_merchant_id'), bad);
  const name = checkName(cell('name'), bad);
  const hold = checkHold(cell('reserve_hold_days'), bad);
  const payoutAccount = names.includes('payout_account')
    ? normalizeAccountId(r.fields[names.indexOf('payout_account')]!)
    : '';
  if (payoutAccount && !/^[A-Z0-9]{5,34}$/.test(payoutAccount))
    bad('payout_account', 'not an IBAN or account number (5 to 34 letters and digits; spaces are ignored)');
  const payoutBic = checkBic(cell('payout_bic').toUpperCase(), payoutAccount, bad);
  const email = cell('email');
  // quoted printable: an override in the address must not reorder the message that names it
  if (email && (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || !checkText(email, EMAIL_TEXT).ok))
    bad('email', `${quoteForMessage(email)} is not an e-mail address`);
  const text = checkTextColumns(cell, bad);
  const language = cell('language').toLowerCase();
  if (language && language !== 'uk' && language !== 'en')
    bad('language', `${JSON.stringify(language)}: expected uk or en`);
  if (issues.length > before) return null;
  return {
    ...text,
    ...(language ? { language: language as 'uk' | 'en' } : {}),
    subMerchantId: id,
    name,
    reserveHoldDays: hold,
    ...(payoutAccount ? { payoutAccount } : {}),
    ...(payoutBic ? { payoutBic } : {}),
    ...(email ? { email } : {}),
    file,
    line: r.line,
  };
}

type Refuse = (column: DirectoryColumn, message: string) => void;

const BIC = /^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/;

/** A BIC: 4 letters (bank), 2 (country), 2 letters or digits (place), optionally 3 more (branch); only with an account. */
function checkBic(bic: string, payoutAccount: string, bad: Refuse): string {
  if (!bic) return bic;
  if (!BIC.test(bic))
    bad(
      'payout_bic',
      `${quoteForMessage(bic)} is not a BIC (8 or 11 letters and digits: bank, country, place, branch)`,
    );
  else if (!payoutAccount) bad('payout_bic', 'a BIC without a payout_account: whose bank would it be?');
  return bic;
}

/** The prefix of the placeholder id a receiver unknown to the directory is stated under (`receiver:<name>`). */
const PLACEHOLDER = 'receiver:';

function checkId(id: string, bad: Refuse): string {
  if (!id) bad('sub_merchant_id', 'empty');
  else if (!/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/.test(id))
    bad('sub_merchant_id', `${JSON.stringify(id)} is not an identifier (letters, digits, _ . : -; at most 100)`);
  // the statements, the payouts leg and the payout runs know an unregistered receiver by this prefix: a
  // sub-merchant of such an id was stated as not registered, its money held whole and never paid
  else if (id.startsWith(PLACEHOLDER))
    bad(
      'sub_merchant_id',
      `${JSON.stringify(id)}: ids beginning with ${PLACEHOLDER} name receivers the directory does not know; choose another id`,
    );
  return id;
}

function checkName(name: string, bad: Refuse): string {
  if (!name) {
    bad('name', "empty (it must equal the register's receiverName)");
    return name;
  }
  // the name is printed on statements and e-mails (the "Sub-merchant" block, the greeting, the title)
  const checked = checkText(name, NAME_TEXT);
  if (!checked.ok) bad('name', `${checked.reason} (${NAME_POLICY})`);
  return name;
}

function checkHold(holdText: string, bad: Refuse): number {
  if (holdText === '') return DEFAULT_RESERVE_HOLD_DAYS;
  if (!/^\d{1,4}$/.test(holdText) || Number(holdText) > 3650) {
    bad(
      'reserve_hold_days',
      `${JSON.stringify(holdText)} is not a whole number of days from 0 to 3650 (empty means ${DEFAULT_RESERVE_HOLD_DAYS})`,
    );
    return DEFAULT_RESERVE_HOLD_DAYS;
  }
  return Number(holdText);
}

/** The printed text columns (TEXT_COLUMNS) that are given, each checked. */
function checkTextColumns(cell: (c: DirectoryColumn) => string, bad: Refuse): Record<string, string> {
  const text: Record<string, string> = {};
  for (const [column, field, max] of TEXT_COLUMNS) {
    const v = cell(column);
    if (!v) continue;
    const checked = checkText(v, { maxLength: max, refuseBidi: true });
    if (!checked.ok)
      bad(
        column,
        `${checked.reason} (at most ${max} characters on one line, no control characters or bidirectional overrides)`,
      );
    else text[field] = v;
  }
  return text;
}

function sharedFileIssue(row: SubMerchantRow, other: SubMerchantRow): CsvIssue {
  return {
    file: row.file,
    line: row.line,
    column: 'sub_merchant_id',
    message: `${row.subMerchantId} (${JSON.stringify(row.name)}) and ${other.subMerchantId} (${JSON.stringify(other.name)}, ${other.file}:${other.line}) would write one statement file, ${statementFileStem(row.subMerchantId, row.name)}-YYYY-MM.xlsx (case ignored, as some file systems do), and the month's statements would be refused for everyone; change one id or name`,
  };
}

/**
 * Rows of several files together: an id or a name given twice with different values is refused, and so is a name
 * that prints as another's (lookOf) or two sub-merchants that would write one statement file.
 */
export function combineDirectory(results: readonly DirectoryResult[]): DirectoryResult {
  const issues = results.flatMap((r) => (r.ok ? [] : r.issues));
  const rows = results.flatMap((r) => (r.ok ? r.rows : []));
  const byId = new Map<string, SubMerchantRow>();
  const byName = new Map<string, SubMerchantRow>();
  // names that differ in code points but not on paper: two sub-merchants no reader could tell apart
  const byLook = new Map<string, SubMerchantRow>();
  // a month's statements are refused whole when two sub-merchants would write one file (case ignored, as some
  // file systems ignore it): taken here, every month after would fail for everyone
  const byFile = new Map<string, SubMerchantRow>();
  const out: SubMerchantRow[] = [];
  for (const row of rows) {
    const seen = byId.get(row.subMerchantId);
    if (seen) {
      if (stableStringify(contentOf(seen)) !== stableStringify(contentOf(row))) {
        issues.push({
          file: row.file,
          line: row.line,
          column: 'sub_merchant_id',
          message: `${row.subMerchantId} is also at ${seen.file}:${seen.line} with other values`,
        });
      }
      continue;
    }
    const other = byName.get(row.name);
    if (other) {
      issues.push({
        file: row.file,
        line: row.line,
        column: 'name',
        message: `${JSON.stringify(row.name)} is already the name of ${other.subMerchantId} (${other.file}:${other.line}); a receiverName must map to one sub-merchant`,
      });
      continue;
    }
    const alike = byLook.get(lookOf(row.name));
    if (alike) {
      issues.push({
        file: row.file,
        line: row.line,
        column: 'name',
        message: `${quoteForMessage(row.name)} prints as ${quoteForMessage(alike.name)}, the name of ${alike.subMerchantId} (${alike.file}:${alike.line}), and differs from it ${differenceOf(row.name, alike.name)}: both would read as one sub-merchant on every statement; keep one row if they are one, else give them names a reader can tell apart`,
      });
      continue;
    }
    const file = statementFileStem(row.subMerchantId, row.name).toLowerCase();
    const sharing = byFile.get(file);
    if (sharing) {
      issues.push(sharedFileIssue(row, sharing));
      continue;
    }
    byId.set(row.subMerchantId, row);
    byName.set(row.name, row);
    byLook.set(lookOf(row.name), row);
    byFile.set(file, row);
    out.push(row);
  }
  return issues.length ? { ok: false, issues } : { ok: true, rows: out };
}

// characters that print as nothing (zero-width space, joiners, word joiner, BOM, soft hyphen, Mongolian vowel separator)
const INVISIBLE = /[\u200B-\u200D\u2060\uFEFF\u00AD\u180E]/g;

/** A name as a reader sees it: composed (NFC), without invisible characters, every kind of space one space. */
export const lookOf = (name: string): string =>
  name.normalize('NFC').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();

/** How two names that print alike differ, in words and code points (a message cannot show the difference itself). */
export function differenceOf(a: string, b: string): string {
  if (a.normalize('NFC') === b.normalize('NFC'))
    return 'only in how its accented letters are encoded (one character or a letter and a combining accent: Unicode NFC and NFD)';
  const marks = new Set(
    [...`${a}${b}`.matchAll(/[\u200B-\u200D\u2060\uFEFF\u00AD\u180E]|[^\S ]/g)].map(
      (m) => `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
    ),
  );
  return `only in invisible characters or kinds of space (${[...marks].sort().join(', ') || 'spaces'})`;
}

/**
 * A file's text as UTF-8, or the line of its first byte that is not UTF-8: never read with U+FFFD put in
 * silently (a name with a replacement character would no longer match the register's receiverName).
 */
export function readUtf8File(file: string): { ok: true; text: string } | { ok: false; line: number; message: string } {
  const bytes = readFileSync(file);
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    // the longest valid prefix tells the line; a decoder without `fatal` gives the same text up to the fault
    const text = new TextDecoder('utf-8').decode(bytes);
    const at = text.indexOf('\uFFFD');
    const line = at < 0 ? 1 : text.slice(0, at).split('\n').length;
    return { ok: false, line, message: 'not UTF-8 text (save the file as UTF-8)' };
  }
}

/** A file, or every *.csv of a directory (sorted by name). */
export function readSubMerchantDirectory(target: string): DirectoryResult {
  let files: string[];
  try {
    files = statSync(target).isDirectory()
      ? readdirSync(target)
          .filter((f) => f.toLowerCase().endsWith('.csv'))
          .sort()
          .map((f) => path.join(target, f))
      : [target];
  } catch (e) {
    return {
      ok: false,
      issues: [{ file: target, line: 0, column: null, message: `cannot read: ${(e as Error).message}` }],
    };
  }
  if (files.length === 0)
    return { ok: false, issues: [{ file: target, line: 0, column: null, message: 'no .csv file in this directory' }] };
  return combineDirectory(
    files.map((f) => {
      try {
        const read = readUtf8File(f);
        if (!read.ok)
          return { ok: false, issues: [{ file: f, line: read.line, column: null, message: read.message }] } as const;
        return parseSubMerchantCsv(read.text, f);
      } catch (e) {
        return {
          ok: false,
          issues: [{ file: f, line: 0, column: null, message: `cannot read: ${(e as Error).message}` }],
        } as DirectoryResult;
      }
    }),
  );
}

export interface ImportResult {
  readonly registered: number;
  readonly unchanged: number;
}

/** The event's data; `payoutAccount` only when given, so a directory without the column re-imports as a no-op. */
function contentOf(row: Omit<SubMerchantRow, 'file' | 'line'>) {
  return {
    subMerchantId: row.subMerchantId,
    name: row.name,
    reserveHoldDays: row.reserveHoldDays,
    ...(row.payoutAccount ? { payoutAccount: row.payoutAccount } : {}),
    ...(row.payoutBic ? { payoutBic: row.payoutBic } : {}),
    ...(row.email ? { email: row.email } : {}),
    ...(row.legalName ? { legalName: row.legalName } : {}),
    ...(row.taxId ? { taxId: row.taxId } : {}),
    ...(row.address ? { address: row.address } : {}),
    ...(row.language ? { language: row.language } : {}),
  };
}

/**
 * Appends a `SubMerchantRegistered` per row that is new or differs from the sub-merchant's latest event.
 * The id comes from the content and the event it supersedes, so a re-import is a no-op and a value that
 * changes back (A → B → A) is still a new event.
 */
export async function importSubMerchants(
  store: EventStore,
  rows: readonly SubMerchantRow[],
  opts: { importedAt?: Date } = {},
): Promise<ImportResult> {
  let unchanged = 0;
  const requests: AppendRequest[] = [];
  for (const row of rows) {
    const stream = subMerchantStream(row.subMerchantId);
    const history = await store.readStream(stream);
    const last = history[history.length - 1];
    // compared with the latest registration: a payee's account confirmed since (PayeeAccountConfirmed) is no change
    const registered = history.findLast((e) => e.type === SubMerchantRegistered.type);
    const content = contentOf(row);
    if (registered && stableStringify(registered.data) === stableStringify(content)) {
      unchanged++;
      continue;
    }
    const event: NewEvent = {
      id: eventIdFor(`${SubMerchantRegistered.type}.v${SubMerchantRegistered.version}`, {
        ...content,
        supersedes: last?.id ?? null,
      }),
      type: SubMerchantRegistered.type,
      version: SubMerchantRegistered.version,
      data: SubMerchantRegistered.schema.parse(content),
      metadata: {
        file: path.basename(row.file),
        line: row.line,
        importedAt: (opts.importedAt ?? new Date()).toISOString(),
      },
    };
    requests.push({ stream, events: [event], expectedRevision: last ? last.revision : 'no_stream' });
  }
  if (requests.length === 0) return { registered: 0, unchanged };
  // one appendMany, one transaction on PostgreSQL: the directory is imported whole or not at all
  const results = await store.appendMany(requests);
  const registered = results.reduce((n, r) => n + (r.appended > 0 ? 1 : 0), 0);
  return { registered, unchanged: unchanged + requests.length - registered };
}

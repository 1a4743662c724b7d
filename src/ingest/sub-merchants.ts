import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { eventIdFor } from '../events/ids';
import { stableStringify } from '../canonical';
import { normalizeAccountId } from '../config/bank';
import { DEFAULT_RESERVE_HOLD_DAYS, SubMerchantRegistered, subMerchantStream } from '../events/ledger-events';
import type { AppendRequest, EventStore, NewEvent } from '../store/types';
import { checkText, NAME_TEXT, quoteForMessage, type TextPolicy } from '../input-rules';

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

interface CsvRecord {
  readonly line: number;
  readonly fields: string[];
}

/** RFC 4180 records with the physical line each starts on; quoted fields may hold commas, quotes and newlines. */
export function parseCsvRecords(
  text: string,
): { ok: true; records: CsvRecord[] } | { ok: false; line: number; message: string } {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let start = 1;
  let quoted = false;
  let wasQuoted = false;
  let i = 0;
  const endRecord = () => {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === '' && !wasQuoted)) records.push({ line: start, fields });
    fields = [];
    field = '';
    wasQuoted = false;
  };
  while (i < src.length) {
    const c = src[i]!;
    if (quoted) {
      if (c === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        const next = src[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          return {
            ok: false,
            line,
            message: 'unexpected character after a closing quote (a quote inside a quoted field is written "")',
          };
        }
        continue;
      }
      if (c === '\n') line++;
      field += c;
      i++;
      continue;
    }
    if (c === '"') {
      if (field.trim() !== '')
        return { ok: false, line, message: 'a quote in the middle of an unquoted field (quote the whole field)' };
      field = '';
      quoted = true;
      wasQuoted = true;
      i++;
      continue;
    }
    if (c === ',') {
      fields.push(field);
      field = '';
      i++;
      continue;
    }
    if (c === '\r' || c === '\n') {
      endRecord();
      i += c === '\r' && src[i + 1] === '\n' ? 2 : 1;
      line++;
      start = line;
      continue;
    }
    field += c;
    i++;
  }
  if (quoted) return { ok: false, line: start, message: 'a quoted field is not closed before the end of the file' };
  if (field !== '' || fields.length > 0 || wasQuoted) endRecord();
  return { ok: true, records };
}

/**
 * One directory file. Every problem is reported (file, line, column), not only the first: one pass over the
 * records, each column checked where it is read, which is why the function is long.
 */
export function parseSubMerchantCsv(text: string, file: string): DirectoryResult {
  const parsed = parseCsvRecords(text);
  if (!parsed.ok) return { ok: false, issues: [{ file, line: parsed.line, column: null, message: parsed.message }] };
  const [header, ...records] = parsed.records;
  if (!header)
    return {
      ok: false,
      issues: [
        { file, line: 1, column: null, message: `empty file: a header ${DIRECTORY_COLUMNS.join(',')} is required` },
      ],
    };
  const names = header.fields.map((h) => h.trim().toLowerCase());
  const issues: CsvIssue[] = [];
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
    return {
      ok: false,
      issues: [
        {
          file,
          line: header.line,
          column: null,
          message: `header must be ${DIRECTORY_COLUMNS.join(',')}: ${parts.join('; ')}`,
        },
      ],
    };
  }
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup)
    return {
      ok: false,
      issues: [{ file, line: header.line, column: dup, message: 'column appears twice in the header' }],
    };
  const col = (c: (typeof DIRECTORY_COLUMNS)[number] | (typeof OPTIONAL_DIRECTORY_COLUMNS)[number]) => names.indexOf(c);
  const rows: SubMerchantRow[] = [];
  for (const r of records) {
    if (r.fields.length !== names.length) {
      issues.push({
        file,
        line: r.line,
        column: null,
        message: `expected ${names.length} fields, found ${r.fields.length}`,
      });
      continue;
    }
    const id = r.fields[col('sub_merchant_id')]!.trim();
    const name = r.fields[col('name')]!.trim();
    const holdText = r.fields[col('reserve_hold_days')]!.trim();
    let bad = false;
    if (!id) {
      issues.push({ file, line: r.line, column: 'sub_merchant_id', message: 'empty' });
      bad = true;
    } else if (!/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/.test(id)) {
      issues.push({
        file,
        line: r.line,
        column: 'sub_merchant_id',
        message: `${JSON.stringify(id)} is not an identifier (letters, digits, _ . : -; at most 100)`,
      });
      bad = true;
    }
    if (!name) {
      issues.push({ file, line: r.line, column: 'name', message: "empty (it must equal the register's receiverName)" });
      bad = true;
    } else {
      // the name is printed on statements and e-mails (the "Sub-merchant" block, the greeting, the title)
      const checked = checkText(name, NAME_TEXT);
      if (!checked.ok) {
        issues.push({ file, line: r.line, column: 'name', message: `${checked.reason} (${NAME_POLICY})` });
        bad = true;
      }
    }
    let hold = DEFAULT_RESERVE_HOLD_DAYS;
    if (holdText !== '') {
      if (!/^\d{1,4}$/.test(holdText) || Number(holdText) > 3650) {
        issues.push({
          file,
          line: r.line,
          column: 'reserve_hold_days',
          message: `${JSON.stringify(holdText)} is not a whole number of days from 0 to 3650 (empty means ${DEFAULT_RESERVE_HOLD_DAYS})`,
        });
        bad = true;
      } else hold = Number(holdText);
    }
    const payoutAccount = col('payout_account') >= 0 ? normalizeAccountId(r.fields[col('payout_account')]!) : '';
    if (payoutAccount && !/^[A-Z0-9]{5,34}$/.test(payoutAccount)) {
      issues.push({
        file,
        line: r.line,
        column: 'payout_account',
        message: 'not an IBAN or account number (5 to 34 letters and digits; spaces are ignored)',
      });
      bad = true;
    }
    const email = col('email') >= 0 ? r.fields[col('email')]!.trim() : '';
    if (email && (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || !checkText(email, EMAIL_TEXT).ok)) {
      issues.push({
        file,
        line: r.line,
        column: 'email',
        // quoted printable: an override in the address must not reorder the message that names it
        message: `${quoteForMessage(email)} is not an e-mail address`,
      });
      bad = true;
    }
    const text: Record<string, string> = {};
    for (const [column, field, max] of TEXT_COLUMNS) {
      const v = col(column) >= 0 ? r.fields[col(column)]!.trim() : '';
      if (!v) continue;
      const checked = checkText(v, { maxLength: max, refuseBidi: true });
      if (!checked.ok) {
        issues.push({
          file,
          line: r.line,
          column,
          message: `${checked.reason} (at most ${max} characters on one line, no control characters or bidirectional overrides)`,
        });
        bad = true;
      } else text[field] = v;
    }
    const language = col('language') >= 0 ? r.fields[col('language')]!.trim().toLowerCase() : '';
    if (language && language !== 'uk' && language !== 'en') {
      issues.push({
        file,
        line: r.line,
        column: 'language',
        message: `${JSON.stringify(language)}: expected uk or en`,
      });
      bad = true;
    }
    if (!bad)
      rows.push({
        ...text,
        ...(language ? { language: language as 'uk' | 'en' } : {}),
        subMerchantId: id,
        name,
        reserveHoldDays: hold,
        ...(payoutAccount ? { payoutAccount } : {}),
        ...(email ? { email } : {}),
        file,
        line: r.line,
      });
  }
  return issues.length ? { ok: false, issues } : { ok: true, rows };
}

/** Rows of several files together: an id or a name given twice with different values is refused. */
export function combineDirectory(results: readonly DirectoryResult[]): DirectoryResult {
  const issues = results.flatMap((r) => (r.ok ? [] : r.issues));
  const rows = results.flatMap((r) => (r.ok ? r.rows : []));
  const byId = new Map<string, SubMerchantRow>();
  const byName = new Map<string, SubMerchantRow>();
  const out: SubMerchantRow[] = [];
  for (const row of rows) {
    const seen = byId.get(row.subMerchantId);
    if (seen) {
      if (
        seen.name !== row.name ||
        seen.reserveHoldDays !== row.reserveHoldDays ||
        seen.payoutAccount !== row.payoutAccount ||
        seen.email !== row.email ||
        seen.legalName !== row.legalName ||
        seen.taxId !== row.taxId ||
        seen.address !== row.address ||
        seen.language !== row.language
      ) {
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
    byId.set(row.subMerchantId, row);
    byName.set(row.name, row);
    out.push(row);
  }
  return issues.length ? { ok: false, issues } : { ok: true, rows: out };
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
function contentOf(
  row: Pick<
    SubMerchantRow,
    | 'subMerchantId'
    | 'name'
    | 'reserveHoldDays'
    | 'payoutAccount'
    | 'email'
    | 'legalName'
    | 'taxId'
    | 'address'
    | 'language'
  >,
) {
  return {
    subMerchantId: row.subMerchantId,
    name: row.name,
    reserveHoldDays: row.reserveHoldDays,
    ...(row.payoutAccount ? { payoutAccount: row.payoutAccount } : {}),
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
    const content = contentOf(row);
    if (last && stableStringify(last.data) === stableStringify(content)) {
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

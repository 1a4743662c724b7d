import { DateTime } from 'luxon';
import type { z } from 'zod';
import {
  operationMethod,
  transactionStatus,
  type OperationMethod,
  type TransactionStatus,
} from '../events/ingest-events';
import { isPlainObject, parseJsonExact, parseJsonFast, toPlainJson } from './json';
import type { Amount } from './schemas';
import { checkText, DEFAULT_PLAUSIBLE_DATES, maskPans } from '../input-rules';

/**
 * Reading the values of the PSP's records one field at a time: the JSON object itself, text PostgreSQL can
 * store, payment ids, times, method and status, amounts. Every failure names the field that failed.
 */

export type ParseResult<T> = { ok: true; value: T } | { ok: false; field: string; reason: string };

export interface ParseOptions {
  /** "now" for the plausibility check of times (default: the clock). */
  readonly now?: Date;
  /**
   * true: lossless-json and the zod schemas only, never the fast paths (tests compare both; the fast
   * paths give the same result or step aside).
   */
  readonly exactOnly?: boolean;
}

/**
 * Earliest plausible record time, the first day every door accepts (src/input-rules.ts); anything before is a
 * unit or encoding error. The latest is stricter than the other doors' (a year, not ten): the PSP reports what
 * happened, never what is planned.
 */
export const EARLIEST_RECORD_TIME = Date.parse(`${DEFAULT_PLAUSIBLE_DATES.earliest}T00:00:00Z`);
/** Latest plausible record time, relative to now. */
export const LATEST_RECORD_AHEAD_MS = 366 * 24 * 3600 * 1000;

export const fail = (field: string, reason: string): { ok: false; field: string; reason: string } => ({
  ok: false,
  field,
  reason,
});

export function readObject(text: string, opts: ParseOptions): ParseResult<Record<string, unknown>> {
  // Fast path (see parseJsonFast): numbers arrive as JS numbers whose text is exactly the source's,
  // which every schema and normalizer reads as it reads a LosslessNumber.
  const fast = opts.exactOnly ? null : parseJsonFast(text);
  const parsed = fast ? { ok: true as const, value: fast.value } : parseJsonExact(text);
  if (!parsed.ok) return fail('(root)', parsed.reason);
  if (!isPlainObject(parsed.value)) return fail('(root)', 'expected a JSON object');
  // Without a \u escape or a surrogate in the text, no string can hold NUL or an unpaired surrogate.
  if (!fast || fast.mayHaveUnstorableText) {
    const bad = unstorableText(parsed.value, '');
    if (bad) return bad;
  }
  return { ok: true, value: parsed.value };
}

// U+0000 and unpaired surrogates are valid in JSON text (as escapes) but PostgreSQL's jsonb and text
// refuse them: accepted, such a record would fail every append of its batch, on every run.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** The first string (member name or value) in a parsed tree that cannot be stored, as a rejection. */
export function unstorableText(value: unknown, path: string): { ok: false; field: string; reason: string } | null {
  const check = (s: string, where: string) => {
    const m = UNSTORABLE.exec(s);
    if (!m) return null;
    return fail(
      where || '(root)',
      m[0] === '\u0000'
        ? 'contains a NUL character (U+0000), which cannot be stored'
        : 'contains an unpaired UTF-16 surrogate (not Unicode text)',
    );
  };
  if (typeof value === 'string') return check(value, path);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const r = unstorableText(value[i], path ? `${path}.${i}` : String(i));
      if (r) return r;
    }
    return null;
  }
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      // The field path is stored too: write an unstorable name's characters as \uXXXX text.
      const name = UNSTORABLE.test(k)
        ? k.replace(UNSTORABLE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
        : k;
      const where = path ? `${path}.${name}` : name;
      const r = check(k, where) ?? unstorableText(v, where);
      if (r) return r;
    }
  }
  return null;
}

/** Longest payment id accepted: it becomes part of a stream name (the PSP's ids are UUIDs). */
export const MAX_PAYMENT_ID_CHARS = 256;

/** A payment id names the payment's stream: non-empty, bounded, no control characters. */
export function badPaymentId(id: string, field: string): { ok: false; field: string; reason: string } | null {
  if (id.trim() === '') return fail(field, 'empty payment id');
  if (id.length > MAX_PAYMENT_ID_CHARS) return fail(field, `payment id longer than ${MAX_PAYMENT_ID_CHARS} characters`);
  // the shared text rule (src/input-rules.ts): no NUL, lone surrogate or control character (C0, DEL, C1);
  // bidirectional overrides are kept as data, as in every other PSP field, and escaped where printed
  const text = checkText(id, { maxLength: MAX_PAYMENT_ID_CHARS });
  if (!text.ok) return fail(field, `payment id contains ${text.reason}`);
  return null;
}

/**
 * Longest text accepted in the other fields a read model keys or indexes by (an order id, a receiver's name, a
 * transaction or operation id, a project id): PostgreSQL refuses a b-tree entry over 2,704 bytes, so a longer
 * value, accepted here, failed the projection that indexes it (the reconciliation's stopped when it went live).
 */
export const MAX_ID_TEXT_CHARS = 256;
/** A receiver's name: longer than the directory's names (200), still within the b-tree entry beside an operation's key. */
export const MAX_RECEIVER_NAME_CHARS = 300;

/** The first of `fields` (name as sent, value, bound) longer than its bound, refused naming it; else null. */
export function overlongIdText(
  fields: ReadonlyArray<readonly [string, string | null | undefined, number?]>,
): { ok: false; field: string; reason: string } | null {
  for (const [field, v, max = MAX_ID_TEXT_CHARS] of fields)
    if (typeof v === 'string' && v.length > max) return fail(field, `longer than ${max} characters (${v.length})`);
  return null;
}

export function firstIssue(error: z.ZodError): { ok: false; field: string; reason: string } {
  const issue = error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  return fail(field, issue?.message ?? 'invalid');
}

function plausible(ms: number, now: Date): string | null {
  if (ms < EARLIEST_RECORD_TIME) return 'time before 2000-01-01 (wrong unit?)';
  if (ms > now.getTime() + LATEST_RECORD_AHEAD_MS) return 'time more than a year ahead of now';
  return null;
}

/** `dateTime`: milliseconds since the epoch (number or numeric string); "" or null → null. */
export function epochMillisToIso(value: string | null | undefined, now: Date = new Date()): ParseResult<string | null> {
  if (value == null || value.trim() === '') return { ok: true, value: null };
  if (!/^\d{1,15}$/.test(value.trim())) return fail('dateTime', 'expected whole milliseconds since the Unix epoch');
  const ms = Number(value.trim());
  const bad = plausible(ms, now);
  if (bad) return fail('dateTime', bad);
  return { ok: true, value: new Date(ms).toISOString() };
}

// Offsets as they exist on Earth: -12:00 … +14:59 (luxon would otherwise accept +99:00), as the shared rule reads
// them (src/input-rules.ts: west of UTC at most 12 hours; -13:00 and -14:00 are no place's)
const RECORD_TIME =
  /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|\+(?:0\d|1[0-4]):?[0-5]\d|-(?:0\d|1[0-2]):?[0-5]\d)?$/;

const PLAIN_UTC = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?Z?$/;

/**
 * The common shape (no zone or Z, at most milliseconds, a real calendar time from 2000 on) read without
 * luxon, which cost a webhook about 15 µs; anything else, valid or not, goes the luxon way, which also
 * words the errors. test/psp/record-time.test.ts checks both ways agree.
 */
function plainUtcMillis(t: string): number | undefined {
  const m = PLAIN_UTC.exec(t);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 2000 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, m[7] ? Number(m[7].padEnd(3, '0')) : 0);
  return new Date(ms).getUTCDate() === day ? ms : undefined;
}

/**
 * Record timestamps (`yyyy-MM-ddTHH:mm:ss.SSS`, no zone shown) are read as UTC. A zone, when one is
 * given, is honoured. "" or null → null.
 */
export function recordTimeToIso(
  value: string | null | undefined,
  field: string,
  now: Date = new Date(),
): ParseResult<string | null> {
  if (value === null || value === undefined || value.trim() === '') return { ok: true, value: null };
  const t = value.trim();
  const plain = plainUtcMillis(t);
  if (plain !== undefined && !plausible(plain, now)) return { ok: true, value: new Date(plain).toISOString() };
  if (!RECORD_TIME.test(t)) return fail(field, 'expected a timestamp yyyy-MM-ddTHH:mm:ss.SSS');
  const dt = DateTime.fromISO(t.replace(' ', 'T'), { zone: 'utc' });
  if (!dt.isValid) return fail(field, `not a valid time: ${dt.invalidExplanation ?? dt.invalidReason}`);
  const bad = plausible(dt.toMillis(), now);
  if (bad) return fail(field, bad);
  return { ok: true, value: dt.toUTC().toISO()! };
}

// Method and status are matched case-insensitively: a change of case is not a change of meaning.
export function methodOf(v: string, field = 'method'): ParseResult<OperationMethod> {
  const r = operationMethod.safeParse(v.trim().toLowerCase());
  return r.success
    ? { ok: true, value: r.data }
    : fail(field, `unknown method ${JSON.stringify(maskPans(v).slice(0, 40))}`);
}
export function statusOf(v: string, field = 'status'): ParseResult<TransactionStatus> {
  const r = transactionStatus.safeParse(v.trim().toLowerCase());
  return r.success
    ? { ok: true, value: r.data }
    : fail(field, `unknown status ${JSON.stringify(maskPans(v).slice(0, 40))}`);
}

export const minor = (a: Amount | null | undefined): string | null => (a == null ? null : a.minor.toString());
export const orNull = (s: string | null | undefined): string | null => (s == null || s === '' ? null : s);

export function otherFields(obj: Record<string, unknown>, mapped: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!mapped.has(k)) out[k] = toPlainJson(v);
  return out;
}

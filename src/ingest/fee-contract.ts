import { percentRatio } from '../order-terms';
import path from 'node:path';
import { eventIdFor } from '../events/ids';
import { stableStringify } from '../canonical';
import {
  DEFAULT_SCHEDULE,
  FeeScheduleLineSet,
  ROUNDING_RULES,
  feeContractStream,
  type FeeScheduleLine,
  type RoundingRule,
} from '../events/order-events';
import { operationMethod } from '../events/ingest-events';
import { parseCsvRecords } from './csv-records';
import { formatCsvIssue, readUtf8File, type CsvIssue } from './sub-merchants';
import { parseAmount, smallestUnit } from '../money';
import { plausibleDay } from '../input-rules';
import type { AppendRequest, EventStore, NewEvent } from '../store/types';

/**
 * The fee contract: what the PSP may charge each sub-merchant, loaded like the directory (a CSV named by
 * RECON_FEE_CONTRACT or given to `recon fees import`, imported as events, every version kept).
 *
 *   sub_merchant_id,method,currency,percent,fixed,effective_from,rounding
 *   *,purchase,EUR,2.9,0.30,2025-01-01,half_up        the default schedule (`*`)
 *   sm-1,purchase,EUR,1.5,0,2025-01-01,               sm-1's own (rounding empty: half_up)
 *
 * The fee of one operation's part is `fixed + round(part × percent / 100)`, never more than the part:
 * `percent` is an exact decimal (at most six decimals) computed as an integer ratio, never a float;
 * `rounding` is declared per line, `half_up` (the default: a half minor unit or more rounds up) or `down`
 * (truncation), and applies once per operation and part. A line applies from `effective_from` (a day in
 * RECON_TIMEZONE) until a later line of the same sub-merchant, method and currency.
 */

export const FEE_COLUMNS = [
  'sub_merchant_id',
  'method',
  'currency',
  'percent',
  'fixed',
  'effective_from',
  'rounding',
] as const;

export type FeeContractResult =
  | { ok: true; lines: Array<FeeScheduleLine & { line: number }> }
  | { ok: false; issues: CsvIssue[] };

export { formatCsvIssue };

function parseLine(fields: Record<string, string>, file: string, line: number) {
  const issues: CsvIssue[] = [];
  const bad = (column: string, message: string) => issues.push({ file, line, column, message });
  const sub = fields.sub_merchant_id!.trim();
  if (sub !== DEFAULT_SCHEDULE && !/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/.test(sub))
    bad('sub_merchant_id', `${JSON.stringify(sub)} is neither a sub-merchant id nor * (the default schedule)`);
  const method = fields.method!.trim();
  if (!operationMethod.safeParse(method).success)
    bad('method', `${JSON.stringify(method)} is not an operation method (${operationMethod.options.join(', ')})`);
  const currency = fields.currency!.trim();
  if (!/^[A-Z]{3}$/.test(currency)) bad('currency', 'expected a three-letter ISO 4217 code such as EUR');
  const percent = fields.percent!.trim();
  // the whole figure against 100 (a validation, no amount): 100.5 is over it, as its integer part was not
  if (!/^\d{1,3}(\.\d{1,6})?$/.test(percent) || Number(percent) > 100)
    bad('percent', `${JSON.stringify(percent)} is not a percentage from 0 to 100 with at most six decimals`);
  const fixedText = fields.fixed!.trim() || '0';
  const fixed = parseAmount(fixedText);
  if (!fixed.ok) bad('fixed', fixed.reason);
  // a fixed fee of a fraction of the currency's smallest unit (0.50 JPY) is charged by no PSP
  else if (/^[A-Z]{3}$/.test(currency) && fixed.minor % smallestUnit(currency) !== 0n)
    bad('fixed', `${JSON.stringify(fixedText)} is not a whole number of ${currency}'s smallest unit`);
  const from = fields.effective_from!.trim();
  // a plausible day (src/input-rules.ts): 0000-01-01 was stored, then failed the projection on every run
  const day = plausibleDay(from);
  if (!day.ok) bad('effective_from', `expected a day YYYY-MM-DD: ${day.reason}`);
  const rounding = (fields.rounding ?? '').trim() || 'half_up';
  if (!(ROUNDING_RULES as readonly string[]).includes(rounding))
    bad('rounding', `expected ${ROUNDING_RULES.join(' or ')} (empty: half_up)`);
  if (issues.length || !fixed.ok) return { issues };
  return {
    issues,
    value: {
      subMerchantId: sub,
      method,
      currency,
      percent,
      fixed: fixed.minor.toString(),
      effectiveFrom: from,
      rounding: rounding as RoundingRule,
      line,
    },
  };
}

export function parseFeeContract(text: string, file: string): FeeContractResult {
  const parsed = parseCsvRecords(text);
  if (!parsed.ok) return { ok: false, issues: [{ file, line: parsed.line, column: null, message: parsed.message }] };
  const [header, ...records] = parsed.records;
  const names = header?.fields.map((h) => h.trim().toLowerCase()) ?? [];
  const required = FEE_COLUMNS.filter((c) => c !== 'rounding');
  const missing = required.filter((c) => !names.includes(c));
  const unknown = names.filter((n) => !(FEE_COLUMNS as readonly string[]).includes(n));
  // a column named twice: the last would win silently (a percent read from the wrong column)
  const twice = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
  if (!header || missing.length || unknown.length || twice.length)
    return {
      ok: false,
      issues: [
        {
          file,
          line: header?.line ?? 1,
          column: null,
          message: `header must be ${FEE_COLUMNS.join(',')} (rounding optional)${missing.length ? `; missing ${missing.join(', ')}` : ''}${unknown.length ? `; unknown ${unknown.join(', ')}` : ''}${twice.length ? `; named twice ${twice.join(', ')}` : ''}`,
        },
      ],
    };
  const issues: CsvIssue[] = [];
  const lines: Array<FeeScheduleLine & { line: number }> = [];
  const keys = new Map<string, number>();
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
    const fields = Object.fromEntries(names.map((n, i) => [n, r.fields[i]!]));
    const p = parseLine(fields, file, r.line);
    issues.push(...p.issues);
    if (!p.value) continue;
    const key = lineKey(p.value);
    const prior = keys.get(key);
    if (prior !== undefined)
      issues.push({
        file,
        line: r.line,
        column: null,
        message: `the same sub-merchant, method, currency and day as line ${prior}`,
      });
    keys.set(key, r.line);
    lines.push(p.value);
  }
  return issues.length ? { ok: false, issues } : { ok: true, lines };
}

export function readFeeContract(file: string): FeeContractResult {
  try {
    const read = readUtf8File(file);
    if (!read.ok) return { ok: false, issues: [{ file, line: read.line, column: null, message: read.message }] };
    return parseFeeContract(read.text, file);
  } catch (e) {
    return { ok: false, issues: [{ file, line: 0, column: null, message: `cannot read: ${(e as Error).message}` }] };
  }
}

/**
 * A line's content as compared with the stored one: its percentage by the value fees are computed from
 * (`percentRatio`, so 2.90 and 02.9 are one percentage), its text kept as first written.
 */
function sameLine(stored: unknown, line: FeeScheduleLine): boolean {
  const was = stored as FeeScheduleLine;
  const a = percentRatio(String(was.percent));
  const b = percentRatio(line.percent);
  return (
    a.num * b.den === b.num * a.den &&
    stableStringify({ ...was, percent: '' }) === stableStringify({ ...line, percent: '' })
  );
}

const lineKey = (l: Pick<FeeScheduleLine, 'subMerchantId' | 'method' | 'currency' | 'effectiveFrom'>) =>
  `${l.subMerchantId}|${l.method}|${l.currency}|${l.effectiveFrom}`;

/**
 * Appends a FeeScheduleLineSet per line that is new or differs from the latest event of its sub-merchant,
 * method, currency and day. The id comes from the content and the event it supersedes, as the directory's:
 * a re-import is a no-op and a value that changes back is still a new version. All streams in one
 * `appendMany` (one transaction on PostgreSQL): a file is imported whole or not at all.
 */
export async function importFeeContract(
  store: EventStore,
  lines: ReadonlyArray<FeeScheduleLine & { line: number }>,
  opts: { file: string; importedAt?: Date },
): Promise<{ set: number; unchanged: number }> {
  let unchanged = 0;
  const bySub = new Map<string, Array<FeeScheduleLine & { line: number }>>();
  for (const l of lines) bySub.set(l.subMerchantId, [...(bySub.get(l.subMerchantId) ?? []), l]);
  const requests: AppendRequest[] = [];
  for (const [sub, subLines] of [...bySub].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const stream = feeContractStream(sub);
    const history = await store.readStream(stream);
    const latest = new Map<string, { id: string; data: unknown }>();
    for (const e of history) latest.set(lineKey(e.data as FeeScheduleLine), { id: e.id, data: e.data });
    const events: NewEvent[] = [];
    for (const { line, ...content } of subLines) {
      const last = latest.get(lineKey(content));
      // the same contract saved again by a spreadsheet (2.90 written 2.9) is no change: a version that never was
      // would show in the history and judge every paid order again
      if (last && sameLine(last.data, content)) {
        unchanged++;
        continue;
      }
      events.push({
        id: eventIdFor(`${FeeScheduleLineSet.type}.v${FeeScheduleLineSet.version}`, {
          ...content,
          supersedes: last?.id ?? null,
        }),
        type: FeeScheduleLineSet.type,
        version: FeeScheduleLineSet.version,
        data: FeeScheduleLineSet.schema.parse(content),
        metadata: { file: path.basename(opts.file), line, importedAt: (opts.importedAt ?? new Date()).toISOString() },
      });
    }
    if (events.length === 0) continue;
    const last = history[history.length - 1];
    requests.push({ stream, events, expectedRevision: last ? last.revision : 'no_stream' });
  }
  if (requests.length === 0) return { set: 0, unchanged };
  const results = await store.appendMany(requests);
  const set = results.reduce((n, r) => n + r.appended, 0);
  const offered = requests.reduce((n, r) => n + r.events.length, 0);
  return { set, unchanged: unchanged + offered - set };
}

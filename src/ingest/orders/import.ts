import { ReconError } from '../../errors';
import path from 'node:path';
import { contentHash } from '../../store/prepare';
import { EventIdConflictError } from '../../store/errors';
import type { EventStore, NewEvent } from '../../store/types';
import { toAppendRequests, type Keyed } from '../observations';
import { orderInput } from './input';
import { FLAT_FIELDS, isFlatRecord, orderRecords, type OrderFileFormat } from './records';
import { createFlatOrders } from './flat';

/**
 * `recon orders import FILE`: two passes over the file, in bounded memory whatever its size.
 *   1. Every record is validated. Nothing is written when any is bad: the problems (file, line, field) are
 *      returned, the first MAX_ISSUES of them. Two records that give one order version different values
 *      (the same order placed twice with other amounts) are a problem too: the ids seen go into a Bloom
 *      filter of fixed size, and the versions it may have seen twice are compared in full by another read.
 *   2. The versions are checked against the store batch by batch: one stored with other values refuses the
 *      file, named by file and line, before anything of it is written (appendWhole).
 *   3. The events are appended in batches of BATCH, one appendMany each (idempotent: an import run again
 *      appends nothing).
 */

export const MAX_ISSUES = 50;
const BATCH = 2000;

export interface OrderIssue {
  readonly file: string;
  readonly line: number;
  readonly field: string | null;
  readonly message: string;
}

export type OrderImport =
  | { ok: true; records: number; appended: number; duplicates: number }
  | { ok: false; issues: OrderIssue[]; records: number };

export function formatOrderIssue(i: OrderIssue): string {
  return `${i.file}:${i.line}${i.field ? ` (field ${i.field})` : ''}: ${i.message}`;
}

export class OrderConflictError extends ReconError {
  readonly code = 'ORDER_CONFLICT';
  readonly kind = 'data';
  constructor(readonly issue: OrderIssue) {
    super(formatOrderIssue(issue));
    this.name = 'OrderConflictError';
  }
}

/**
 * Which version ids a file has given, in fixed memory whatever its size: a Bloom filter over the ids
 * (16 MiB, 7 probes; ids are UUID v5, already uniformly distributed, so their own bits are the hashes).
 * A "maybe seen" is checked exactly by a second read of the file (compareSuspects); at a million orders
 * about one id in a billion is a false "maybe".
 */
function createSeenIds() {
  const BITS = 2 ** 27;
  const words = new Uint32Array(BITS / 32);
  return {
    /** marks the id; true when it may have been marked before */
    add(id: string): boolean {
      const hex = id.replace(/-/g, '');
      const h1 = Number.parseInt(hex.slice(0, 8), 16);
      const h2 = Number.parseInt(hex.slice(8, 16), 16) | 1;
      let all = true;
      for (let i = 0; i < 7; i++) {
        const bit = ((h1 + Math.imul(i, h2)) >>> 0) & (BITS - 1);
        const w = bit >>> 5;
        const m = 1 << (bit & 31);
        if ((words[w]! & m) === 0) {
          all = false;
          words[w]! |= m;
        }
      }
      return all;
    },
  };
}

async function validate(file: string, format: OrderFileFormat, now?: Date) {
  const name = path.basename(file);
  const issues: OrderIssue[] = [];
  const seen = createSeenIds();
  const suspects = new Set<string>();
  let records = 0;
  for await (const r of orderRecords(file, format)) {
    records++;
    if (!('record' in r)) {
      if (issues.length < MAX_ISSUES) issues.push({ file: name, line: r.line, field: r.field, message: r.message });
      continue;
    }
    const v = orderInput(r.record, now ? { now } : {});
    if (!v.ok) {
      if (issues.length < MAX_ISSUES) issues.push({ file: name, line: r.line, field: v.field, message: v.message });
      continue;
    }
    if (seen.add(v.item.event.id)) suspects.add(v.item.event.id);
  }
  if (suspects.size && issues.length === 0) issues.push(...(await compareSuspects(file, format, suspects)));
  return { issues, records };
}

/** The versions that may have been given twice, read again: the same id with other content is a conflict. */
async function compareSuspects(
  file: string,
  format: OrderFileFormat,
  suspects: ReadonlySet<string>,
): Promise<OrderIssue[]> {
  const byId = new Map<string, { line: number; hash: string }>();
  const issues: OrderIssue[] = [];
  for await (const r of orderRecords(file, format)) {
    if (!('record' in r)) continue;
    const v = orderInput(r.record);
    if (!v.ok || !suspects.has(v.item.event.id)) continue;
    const hash = contentHash(v.item.event);
    const prior = byId.get(v.item.event.id);
    if (!prior) byId.set(v.item.event.id, { line: r.line, hash });
    else if (prior.hash !== hash && issues.length < MAX_ISSUES)
      issues.push({
        file: path.basename(file),
        line: r.line,
        field: null,
        message: `order ${v.orderId}: this version is also at line ${prior.line} with other values (send a change as an amendment, with amended_at)`,
      });
  }
  return issues;
}

/** Appends one batch; a version stored before with other values is reported with its line. */
export async function appendOrderBatch(
  store: EventStore,
  batch: readonly { item: Keyed; line: number }[],
  file: string,
): Promise<{ appended: number; duplicates: number }> {
  try {
    const results = await store.appendMany(toAppendRequests(batch.map((b) => b.item)));
    return {
      appended: results.reduce((a, r) => a + r.appended, 0),
      duplicates: results.reduce((a, r) => a + r.duplicates, 0),
    };
  } catch (e) {
    if (!(e instanceof EventIdConflictError)) throw e;
    throw conflictOf(
      file,
      batch.find((b) => b.item.event.id === e.eventId),
    );
  }
}

type Batch = readonly { item: Keyed; line: number }[];

function conflictOf(file: string, at: { item: Keyed; line: number } | undefined): OrderConflictError {
  return new OrderConflictError({
    file,
    line: at?.line ?? 0,
    field: null,
    message: `order ${at ? String((at.item.event.data as { orderId: string }).orderId) : '?'}: this version is already recorded with other values (send a change as an amendment, with amended_at)`,
  });
}

/**
 * A whole file's batches appended all or nothing as far as the store lets us know beforehand (docs/orders.md):
 * every batch is first checked against the versions stored (a version stored with other values refuses the
 * file, naming its line, before anything of it is written), then the batches are appended one appendMany
 * each, as before. One bulk append of the whole file held every order's stream in memory to its end, and the
 * month's process kept the heap it grew (docs/scale.md, thirteenth session). A store that cannot read many
 * streams at once (EventStoreDB) is not checked first: its appends are not atomic across streams anyway. A
 * conflicting version written by another import between the check and the append still refuses at its batch.
 */
async function appendWhole(
  store: EventStore,
  batches: () => AsyncIterable<Batch>,
  file: string,
): Promise<{ appended: number; duplicates: number }> {
  if (store.readStreams) for await (const batch of batches()) await refuseStoredOtherwise(store, batch, file);
  let appended = 0;
  let duplicates = 0;
  for await (const batch of batches()) {
    const r = await appendOrderBatch(store, batch, file);
    appended += r.appended;
    duplicates += r.duplicates;
  }
  return { appended, duplicates };
}

/** Refuses the batch's first version whose id the store holds with other values (the store's own test). */
async function refuseStoredOtherwise(store: EventStore, batch: Batch, file: string): Promise<void> {
  const streams = [...new Set(batch.map((b) => b.item.stream))];
  const stored = new Map((await store.readStreams!(streams)).map((e) => [e.id, contentHash(e)]));
  if (stored.size === 0) return;
  for (const b of batch) {
    const was = stored.get(b.item.event.id);
    if (was !== undefined && was !== contentHash(b.item.event)) throw conflictOf(file, b);
  }
}

export async function importOrderFile(
  store: EventStore,
  file: string,
  format: OrderFileFormat,
  opts: { importedAt?: Date /** "now" of the plausible range of times (default: the clock) */; now?: Date } = {},
): Promise<OrderImport> {
  if ((await layoutOf(file, format)) === 'flat') return importFlatOrderFile(store, file, format, opts);
  const checked = await validate(file, format, opts.now);
  if (checked.issues.length) return { ok: false, issues: checked.issues, records: checked.records };
  const name = path.basename(file);
  const importedAt = (opts.importedAt ?? new Date()).toISOString();
  const now = opts.now ? { now: opts.now } : {};
  async function* versions(): AsyncGenerator<{ item: Keyed; line: number }> {
    for await (const r of orderRecords(file, format)) {
      if (!('record' in r)) continue;
      const v = orderInput(r.record, now);
      if (!v.ok) continue;
      const event: NewEvent = {
        ...v.item.event,
        metadata: { source: 'orders-file', file: name, line: r.line, importedAt },
      };
      yield { item: { stream: v.item.stream, event }, line: r.line };
    }
  }
  async function* batches(): AsyncGenerator<Batch> {
    const batch: { item: Keyed; line: number }[] = [];
    for await (const v of versions()) {
      batch.push(v);
      if (batch.length >= BATCH) yield batch.splice(0, batch.length);
    }
    if (batch.length) yield batch;
  }
  const r = await appendWhole(store, batches, name);
  return { ok: true, records: checked.records, ...r };
}

/** The file's layout, from its first record (a CSV's header gives every record the same columns). */
async function layoutOf(file: string, format: OrderFileFormat): Promise<'flat' | 'orders'> {
  for await (const r of orderRecords(file, format))
    if ('record' in r) return isFlatRecord(r.record) ? 'flat' : 'orders';
  return 'orders';
}

/**
 * The flat layout (one row per split part, src/ingest/orders/flat.ts): every row read and gathered by order,
 * every order checked, and nothing written when any row or order is bad; then appended as the other layout is.
 */
async function importFlatOrderFile(
  store: EventStore,
  file: string,
  format: OrderFileFormat,
  opts: { importedAt?: Date; now?: Date },
): Promise<OrderImport> {
  const name = path.basename(file);
  const flat = createFlatOrders();
  const issues: OrderIssue[] = [];
  let records = 0;
  for await (const r of orderRecords(file, format)) {
    records++;
    if (!('record' in r)) {
      issues.push({ file: name, line: r.line, field: r.field, message: r.message });
      continue;
    }
    const unknown = Object.keys(r.record).find((k) => !(FLAT_FIELDS as readonly string[]).includes(k));
    if (unknown) {
      issues.push({
        file: name,
        line: r.line,
        field: unknown,
        message: `unknown field (one row per split part: ${FLAT_FIELDS.join(', ')})`,
      });
      continue;
    }
    flat.add(r.line, r.record);
  }
  issues.push(...flat.issues.map((i) => ({ file: name, ...i })));
  const importedAt = (opts.importedAt ?? new Date()).toISOString();
  const items: { item: Keyed; line: number }[] = [];
  for (const o of flat.orders(opts.now ? { now: opts.now } : {})) {
    if (!o.input.ok) {
      issues.push({ file: name, line: o.line, field: o.input.field, message: o.input.message });
      continue;
    }
    const event: NewEvent = {
      ...o.input.item.event,
      metadata: { source: 'orders-file', file: name, line: o.line, lines: o.lines, importedAt },
    };
    items.push({ item: { stream: o.input.item.stream, event }, line: o.line });
  }
  if (issues.length) return { ok: false, issues: issues.sort((a, b) => a.line - b.line).slice(0, MAX_ISSUES), records };
  async function* batches(): AsyncGenerator<Batch> {
    for (let i = 0; i < items.length; i += BATCH) yield items.slice(i, i + BATCH);
  }
  const r = await appendWhole(store, batches, name);
  return { ok: true, records, ...r };
}

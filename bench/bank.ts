import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { SaxesParser } from 'saxes';
import type { BankAccount } from '../src/config/bank';
import { connect } from '../src/db/connect';
import { checkFile } from '../src/ingest/bank/check';
import { importAsBulk } from '../src/ingest/bank/bulk';
import { importBankFiles } from '../src/ingest/bank/import';
import { entryEvents, occurrenceCounter } from '../src/ingest/bank/entry-events';
import { knownEventsOf } from '../src/ingest/bank/known-events';
import type { ParsedEntry } from '../src/ingest/bank/types';
import { type BankFileEntry, writeCamt053Stream } from '../src/sandbox/bank-files';
import { createPostgresEventStore } from '../src/store/postgres';
import { checkStreamName, prepareEvent } from '../src/store/prepare';
import type { BulkEvent, EventStore, NewEvent } from '../src/store/types';
import { cpuSince, serverCpuMeter } from './cpu';
import { type BenchContext, perSecond, sampleRss, timed } from './harness';

/**
 * Issue 16's bank import benchmark: a camt.053 of BANK_BENCH_ENTRIES entries (default 1,000,000; 20,000 with
 * --quick), written streamed to a temporary file, imported streamed into a fresh database (`recon bank import`'s
 * code: on PostgreSQL one bulk append fed by the reading that checks the file), beside saxes alone reading
 * the same file with no handler work (the ceiling), the import's first reading alone (parse, check, foot:
 * no events, no database), the import with a store that only prepares the events (what node does, no
 * database: the import's ceiling whatever the database does), and the store's own appends of the same
 * events with no file (bulk, and batched as the import did before). Peak RSS of the import at a tenth of
 * the entries and at the full size: it must stay flat.
 */

/** The machine's cores: the CPU the import can use in parallel (node, the server). */
const CORES = availableParallelism();

const ACCOUNT: BankAccount = { id: 'UA213223130000026007233566001', currency: 'UAH', role: 'settlement', name: null };

function entryAt(i: number): BankFileEntry {
  const day = `2025-${String(1 + ((i >> 16) % 12)).padStart(2, '0')}-${String(1 + ((i >> 11) % 28)).padStart(2, '0')}`;
  const credit = i % 3 !== 0;
  return {
    direction: credit ? 'credit' : 'debit',
    amount: BigInt(100 + ((i * 7919) % 500_000)),
    bookingDate: day,
    bankRef: `BR${i.toString(36).padStart(8, '0')}`,
    details: [
      {
        endToEndId: `E2E-${i}`,
        remittance: credit ? `settlement ${day}` : `ST-${(i % 9973).toString().padStart(6, '0')}`,
        counterpartyName: credit ? 'PSP Payments LLC' : `Sub-merchant ${i % 997}`,
        counterpartyAccount: credit ? 'UA903052992990004149123456789' : `UA${String(10 ** 26 + i).slice(1, 28)}`,
      },
    ],
  };
}

/** Entries ordered by booking day, as a statement gives them. */
function orderedEntryAt(count: number): (i: number) => BankFileEntry {
  const perDay = Math.ceil(count / 300);
  return (i) => {
    const e = entryAt(i);
    const d = Math.floor(i / perDay);
    const day = `2025-${String(1 + (Math.floor(d / 28) % 12)).padStart(2, '0')}-${String(1 + (d % 28)).padStart(2, '0')}`;
    return { ...e, bookingDate: day };
  };
}

async function writeFile(file: string, count: number): Promise<void> {
  const out = createWriteStream(file);
  await writeCamt053Stream(
    out,
    {
      accountId: ACCOUNT.id,
      currency: 'UAH',
      statementId: `BENCH-${count}`,
      openingDate: '2025-01-01',
      closingDate: '2025-12-31',
      openingBalance: 0n,
    },
    count,
    orderedEntryAt(count),
  );
  out.end();
  await finished(out);
}

/** saxes over the file with the handlers a reader needs registered, doing nothing: the parser's own speed. */
async function saxesAlone(file: string): Promise<number> {
  const parser = new SaxesParser({ xmlns: false, position: true });
  let entries = 0;
  parser.on('opentag', (t) => {
    if (t.name === 'Ntry') entries++;
  });
  parser.on('text', () => {});
  parser.on('closetag', () => {});
  const input = createReadStream(file, { highWaterMark: 256 * 1024 });
  input.setEncoding('utf8');
  for await (const chunk of input) parser.write(chunk as string);
  parser.close();
  return entries;
}

/** The parsed form of a generated entry, as the camt reader gives it (for the store-only reference). */
function parsedOf(e: BankFileEntry): ParsedEntry {
  const d = e.details![0]!;
  return {
    amount: e.amount,
    direction: e.direction,
    currency: 'UAH',
    status: 'booked',
    bookingDate: e.bookingDate,
    valueDate: e.bookingDate,
    bankRef: e.bankRef ?? null,
    isReversal: false,
    transactionCode: null,
    info: null,
    where: '',
    details: [
      {
        amount: null,
        direction: null,
        endToEndId: d.endToEndId ?? null,
        remittance: d.remittance ?? null,
        counterpartyName: d.counterpartyName ?? null,
        counterpartyAccount: d.counterpartyAccount ?? null,
        isReturn: false,
        transactionCode: null,
        bankRef: null,
      },
    ],
  };
}

/** The events of the generated entries, in batches of 500 as the reading gives them. */
async function* eventsOfEntries(count: number): AsyncGenerator<BulkEvent[]> {
  const at = orderedEntryAt(count);
  const occ = occurrenceCounter(true);
  const stream = `bank-${ACCOUNT.id}`;
  for (let i = 0; i < count; i += 500) {
    const batch: BulkEvent[] = [];
    for (let j = i; j < Math.min(count, i + 500); j++)
      for (const event of entryEvents(ACCOUNT.id, { statementId: 'S', currency: 'UAH' }, parsedOf(at(j)), occ))
        batch.push({ stream, event });
    yield batch;
  }
}

/**
 * The same events appended straight to the store, with no file: what the event store alone allows (into a
 * stream of its own). `bulk`: one appendBulk, as the import does; else 2,000 per appendMany, as the import
 * did before the bulk append.
 */
async function storeAlone(ctx: BenchContext, count: number, bulk: boolean): Promise<number> {
  const db = await ctx.createDatabase();
  const sql = connect(db.url, { max: 4 });
  try {
    const store = createPostgresEventStore(sql);
    const r = await timed(async () => {
      if (bulk) {
        await store.appendBulk(eventsOfEntries(count));
        return;
      }
      let events: NewEvent[] = [];
      for await (const batch of eventsOfEntries(count)) {
        events.push(...batch.map((b) => b.event));
        if (events.length < 2000) continue;
        await store.appendMany([{ stream: `bank-${ACCOUNT.id}`, events }]);
        events = [];
      }
      if (events.length > 0) await store.appendMany([{ stream: `bank-${ACCOUNT.id}`, events }]);
    });
    return perSecond(count, r.ms);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * What the server spends to store one entry's row with nothing to parse and no client to wait for: the
 * imported rows inserted again, by one statement, into a table like es_events (its indexes, its write-ahead
 * log), as CPU µs per entry of the server's processes. Near what storing alone costs, a little above it: the
 * statement also reads the rows back from es_events in their order.
 */
async function serverFloor(
  sql: ReturnType<typeof connect>,
  serverCpu: () => ReturnType<Awaited<ReturnType<typeof serverCpuMeter>>>,
  count: number,
): Promise<{ all: number; background: number } | undefined> {
  await sql`create table bench_floor (like es_events including defaults including indexes including constraints)`;
  const before = serverCpu();
  const [row] = await sql<{ n: bigint }[]>`
    with stored as (
      insert into bench_floor (event_id, stream_id, stream_revision, type, version, data, metadata, content_hash)
      select event_id, stream_id, stream_revision, type, version, data, metadata, content_hash
      from es_events where type = 'BankEntryBooked' order by global_position
      returning 1)
    select count(*) as n from stored`;
  const after = serverCpu();
  const ms = cpuSince(before, after);
  const background = cpuSince(before, after, 'background');
  if (Number(row!.n) !== count) throw new Error(`stored ${row!.n} rows again, expected ${count}`);
  // the background processes' share (WAL writer, checkpointer, an autovacuum of the import) is told apart
  return ms === undefined || background === undefined
    ? undefined
    : { all: (ms * 1000) / count, background: (background * 1000) / count };
}

/** A store that prepares every event as an append does (validation, canonical JSON, content hash) and stores nothing. */
function preparingStore(): EventStore {
  return {
    backend: 'postgres',
    async appendBulk(batches) {
      const streams = new Set<string>();
      for await (const batch of batches)
        for (const b of batch) {
          if (!streams.has(b.stream)) {
            checkStreamName(b.stream);
            streams.add(b.stream);
          }
          prepareEvent(b.stream, b.event);
        }
      return { streams: [], byLabel: new Map() };
    },
  } as Partial<EventStore> as EventStore;
}

async function measure(ctx: BenchContext, dir: string, count: number) {
  const file = path.join(dir, `camt053-${count}.xml`);
  await writeFile(file, count);
  const mb = statSync(file).size / 2 ** 20;
  const parse = await timed(() => saxesAlone(file));
  if (parse.result !== count) throw new Error(`saxes counted ${parse.result} entries, expected ${count}`);
  // the import's first reading alone (parse, check, foot): what the reader costs beside the parser
  const check = await timed(() => checkFile(file, 'camt.053', undefined, [ACCOUNT]));
  if (check.result.problems.length > 0) throw new Error(check.result.problems.join('\n'));
  // the import as node does it (reading, events, preparing them for the store), no database
  const node = await timed(() => importAsBulk(preparingStore(), [file], { accounts: [ACCOUNT] }));
  const db = await ctx.createDatabase();
  const sql = connect(db.url, { max: 4 });
  try {
    const store = createPostgresEventStore(sql);
    const serverCpu = await serverCpuMeter(sql);
    global.gc?.();
    const rss = sampleRss(20);
    const node0 = process.cpuUsage();
    const server0 = serverCpu();
    const run = await timed(() => importBankFiles(store, knownEventsOf(store, sql), [file], { accounts: [ACCOUNT] }));
    const nodeCpu = process.cpuUsage(node0);
    const serverMs = cpuSince(server0, serverCpu());
    const peak = rss.stop();
    const floor = await serverFloor(sql, serverCpu, count);
    const o = run.result[0]!;
    if (o.entries !== count || o.statements !== 1) throw new Error(`imported ${o.entries} entries, expected ${count}`);
    ctx.note(
      `${count} entries (${mb.toFixed(0)} MB): saxes alone ${(parse.ms / 1000).toFixed(1)} s, first reading ${(check.ms / 1000).toFixed(1)} s, import without database ${(node.ms / 1000).toFixed(1)} s, import ${(run.ms / 1000).toFixed(1)} s, peak RSS ${(peak / 2 ** 20).toFixed(0)} MB`,
    );
    return {
      parse: perSecond(count, parse.ms),
      check: perSecond(count, check.ms),
      node: perSecond(count, node.ms),
      imported: perSecond(count, run.ms),
      peakMb: peak / 2 ** 20,
      // CPU per entry (µs): node's, the server's, and the server's alone storing the same rows again
      nodeUs: (nodeCpu.user + nodeCpu.system) / count,
      serverUs: serverMs === undefined ? undefined : (serverMs * 1000) / count,
      floorUs: floor,
      parseUs: (parse.ms * 1000) / count,
    };
  } finally {
    await sql.end({ timeout: 5 });
    rmSync(file, { force: true });
  }
}

export async function run(ctx: BenchContext): Promise<void> {
  const full = Number(process.env.BANK_BENCH_ENTRIES ?? (ctx.quick ? 20_000 : 1_000_000));
  const small = Math.min(100_000, Math.max(1, Math.floor(full / 10)));
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-bench-bank-'));
  try {
    const atSmall = await measure(ctx, dir, small);
    const atFull = await measure(ctx, dir, full);
    const bulk = await storeAlone(ctx, full, true);
    const batched = await storeAlone(ctx, full, false);
    ctx.figure({
      name: `bank import, camt.053 of ${full} entries`,
      value: atFull.imported,
      unit: 'entries/s',
      reference: { name: 'saxes alone, same file', value: atFull.parse },
      target: { minRatio: 0.5, text: '≥ 0.5 × saxes alone' },
    });
    ctx.figure({
      name: `bank import, camt.053 of ${full} entries, beside the store`,
      value: atFull.imported,
      unit: 'entries/s',
      reference: { name: "the store's bulk append of the same events, no file", value: bulk },
    });
    ctx.figure({
      name: `the store's bulk append of the same events, ${full}`,
      value: bulk,
      unit: 'entries/s',
      reference: { name: "the store's batched append (appendMany of 2,000)", value: batched },
    });
    ctx.figure({
      name: `bank import's first reading (parse, check, foot), ${full} entries`,
      value: atFull.check,
      unit: 'entries/s',
      reference: { name: 'saxes alone, same file', value: atFull.parse },
    });
    ctx.figure({
      name: `bank import without database (reading, events, prepared for the store), ${full} entries`,
      value: atFull.node,
      unit: 'entries/s',
      reference: { name: 'saxes alone, same file', value: atFull.parse },
    });
    // the CPU the import needs per entry against what two cores give in twice saxes' time per entry
    const budgetUs = CORES * 2 * atFull.parseUs;
    if (atFull.serverUs !== undefined && atFull.floorUs !== undefined) {
      ctx.note(
        `CPU per entry at ${full}: saxes alone ${atFull.parseUs.toFixed(1)} µs; import: node ${atFull.nodeUs.toFixed(1)} µs + server ${atFull.serverUs.toFixed(1)} µs; server storing the same rows again, alone: ${atFull.floorUs.all.toFixed(1)} µs (background processes ${atFull.floorUs.background.toFixed(1)} of it)`,
      );
      ctx.figure({
        name: `bank import CPU per entry, node + server, ${full} entries`,
        value: atFull.nodeUs + atFull.serverUs,
        unit: 'µs',
        reference: { name: `${CORES} cores × 2 × saxes alone per entry (CPU that ratio 0.5 allows)`, value: budgetUs },
        target: { max: budgetUs, text: 'within what ratio 0.5 allows' },
      });
      ctx.figure({
        name: 'saxes alone + the server storing the rows alone (no reader, no events), per entry',
        value: atFull.parseUs + atFull.floorUs.all,
        unit: 'µs',
        reference: { name: `${CORES} cores × 2 × saxes alone per entry`, value: budgetUs },
      });
    }
    ctx.figure({ name: `bank import peak RSS, ${small} entries`, value: atSmall.peakMb, unit: 'MB' });
    ctx.figure({
      name: `bank import peak RSS, ${full} entries`,
      value: atFull.peakMb,
      unit: 'MB',
      reference: { name: `peak RSS at ${small} entries`, value: atSmall.peakMb },
      target: { max: atSmall.peakMb * 1.25 + 32, text: `flat: ≤ 1.25 × the ${small}-entry peak + 32 MB` },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

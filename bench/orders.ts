import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { createPostgresEventStore } from '../src/store/postgres';
import { toAppendRequests, type Keyed } from '../src/ingest/observations';
import { importOrderFile } from '../src/ingest/orders/import';
import { orderInput } from '../src/ingest/orders/input';
import { perSecond, sampleRss, timed, type BenchContext } from './harness';

/**
 * Issue 17: `recon orders import` of an NDJSON file of BENCH_ORDERS orders (default 1,000,000; 20,000 with
 * --quick), beside the store's batched append of the same events (the same 2,000-event appendMany, events
 * built in memory: no file, no parsing, no validation pass). Memory: the import's peak RSS growth is measured
 * for a file a tenth the size and for the full file; flat means they are about the same.
 */

const SUBS = ['sm-a', 'sm-b', 'sm-c', 'sm-d', 'sm-e'];

function record(n: number, run: string) {
  const amount = 1_000 + ((n * 7_877) % 900_000);
  const first = Math.floor(amount / 3);
  return {
    order_id: `${run}-${n}`,
    amount: (amount / 100).toFixed(2),
    currency: 'EUR',
    created_at: new Date(Date.UTC(2025, 0, 1) + n * 2_311).toISOString(),
    split: [
      { sub_merchant_id: SUBS[n % 5]!, amount: (first / 100).toFixed(2) },
      { sub_merchant_id: SUBS[(n + 1) % 5]!, amount: ((amount - first) / 100).toFixed(2) },
    ],
    customer_reference: `cust-${n % 10_007}`,
  };
}

async function writeFile(file: string, count: number, run: string): Promise<void> {
  const out = createWriteStream(file);
  for (let n = 0; n < count; n++) {
    if (!out.write(`${JSON.stringify(record(n, run))}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function importMeasured(url: string, file: string, count: number) {
  const store = createPostgresEventStore((await import('../src/db/connect')).connect(url, { max: 4 }), {
    ownsConnection: true,
  });
  global.gc?.();
  const before = process.memoryUsage.rss();
  const rss = sampleRss();
  const { ms, result } = await timed(() => importOrderFile(store, file, 'ndjson'));
  const peak = rss.stop();
  await store.close();
  if (!result.ok || result.appended !== count)
    throw new Error(`import failed: ${JSON.stringify(result).slice(0, 500)}`);
  return { ms, growthMb: (peak - before) / 1_048_576, peakMb: peak / 1_048_576 };
}

export async function run(ctx: BenchContext): Promise<void> {
  const count = Number(process.env.BENCH_ORDERS ?? (ctx.quick ? 20_000 : 1_000_000));
  const small = Math.max(1, Math.floor(count / 10));
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-bench-orders-'));
  try {
    const smallFile = path.join(dir, 'small.ndjson');
    const file = path.join(dir, 'orders.ndjson');
    await writeFile(smallFile, small, 's');
    await writeFile(file, count, 'o');
    ctx.note(
      `${count.toLocaleString('en-US')} orders (2 parts each) in NDJSON; a file of ${small.toLocaleString('en-US')} for the memory check`,
    );

    const smallDb = await ctx.createDatabase();
    const smallRun = await importMeasured(smallDb.url, smallFile, small);
    const full = await importMeasured(ctx.url, file, count);

    const refDb = await ctx.createDatabase();
    const refStore = createPostgresEventStore(refDb.sql);
    const ref = await timed(async () => {
      for (let n = 0; n < count; n += 2000) {
        const batch: Keyed[] = [];
        for (let k = n; k < Math.min(count, n + 2000); k++) {
          const v = orderInput(record(k, 'o'));
          if (v.ok) batch.push(v.item);
        }
        await refStore.appendMany(toAppendRequests(batch));
      }
    });
    ctx.figure({
      name: 'orders import (NDJSON, two passes)',
      value: perSecond(count, full.ms),
      unit: 'orders/s',
      reference: { name: "store's batched append", value: perSecond(count, ref.ms) },
      target: { minRatio: 0.5, text: '≥ half the store alone' },
    });
    ctx.figure({
      name: `import RSS growth, ${small.toLocaleString('en-US')} orders`,
      value: smallRun.growthMb,
      unit: 'MB',
    });
    ctx.figure({
      name: `import RSS growth, ${count.toLocaleString('en-US')} orders`,
      value: full.growthMb,
      unit: 'MB',
      reference: { name: 'a tenth of the orders', value: smallRun.growthMb },
      target: { max: smallRun.growthMb + 64, text: 'flat: within 64 MB of a tenth' },
    });
    ctx.note(`peak RSS ${full.peakMb.toFixed(0)} MB`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

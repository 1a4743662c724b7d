import type { AddressInfo } from 'node:net';
import { createConsole, LOGIN_LIMIT } from '../src/console/console';
import { createRejectionLimiter } from '../src/http/rate-limit';
import { LEGS, type Leg } from '../src/reconciliation/discrepancies/registry';
import { createDiscrepancyTable, discrepancyView } from '../src/reconciliation/discrepancies/table';
import type { Sql } from '../src/db/connect';
import { createHttpApp } from '../src/http/http-app';
import { asyncRoute } from '../src/http/routes';
import { silentLogger } from '../src/log';
import { directoryReader } from '../src/people/authenticate';
import { addUser } from '../src/people/manage';
import { legPart, PAGE_SIZE, parseQueueFilter, queuePage } from '../src/console/queue';
import { createPostgresEventStore } from '../src/store/postgres';
import type { BenchContext } from './harness';

/**
 * The console's exceptions page (`npm run bench -- console`): 100,000 discrepancies (BENCH_CONSOLE_ROWS; --quick
 * 20,000) seeded straight into the four legs' tables with SQL — tables made by the legs' own
 * `createDiscrepancyTable` (so with the queue's indexes) and published as the recon.* views the console reads;
 * no events, since the page reads only the views. Then the page over real HTTP with a session (filters, sorting,
 * keyset pages deep into the queue), p50 and p95 over N requests, beside the same queries run directly in the
 * same run, and a bare `select 1` round trip. EXPLAIN of each filter must show the legs' indexes.
 */

const TYPES: Record<Leg, string[]> = {
  psp: ['amount_mismatch', 'status_mismatch', 'fee_mismatch', 'missing_in_report', 'unknown_sub_merchant'],
  orders: ['order_not_at_psp', 'payment_without_order', 'fee_above_contract'],
  payouts: ['payout_missing', 'payout_unexpected', 'payout_returned'],
  settlement: ['settlement_short', 'settlement_late', 'settlement_unexpected'],
};

export async function seed(sql: Sql, rows: number): Promise<void> {
  await sql.begin(async (tx) => {
    for (const leg of LEGS) {
      const schema = `bench_console_${leg}`;
      await tx`create schema ${tx(schema)}`;
      await createDiscrepancyTable(tx as never, schema);
      const types = TYPES[leg];
      const n = Math.floor(rows / LEGS.length);
      // amounts as the legs write them: decimal strings of minor units, in the field each type reads
      await tx`
        insert into ${tx(schema)}.discrepancies (id, type, status, pos_id, payment_id, order_id, operation_key,
          receiver_name, sub_merchant_id, sub_merchant_ids, currency, occurred_at, "values", evidence,
          detected_at, detected_by_event, updated_by_event, amount_in_doubt)
        select gen_random_uuid(), (${types}::text[])[1 + i % ${types.length}],
          (array['open','open','open','resolved','accepted'])[1 + (i / 7) % 5], 'pos-1', 'pay-' || ${leg} || i,
          'order-' || i, ${leg} || ':' || i, 'Receiver ' || (i % 200), 'sm-' || (i % 200), array['sm-' || (i % 200)],
          (array['UAH','EUR','USD'])[1 + i % 3], now() - (i % 90) * interval '1 day',
          jsonb_build_object('register', jsonb_build_object('amount', ((i * 7919) % 5000000)::text),
            'expected', ((i * 7919) % 5000000)::text, 'amount', ((i * 7919) % 5000000)::text,
            'received', ((i * 7919) % 5000000)::text, 'shortfall', ((i * 31) % 100000)::text,
            'order_amount', ((i * 7919) % 5000000)::text, 'psp_amount', ((i * 7919) % 5000000)::text,
            'difference', ((i * 13) % 10000)::text),
          '{}', now() - (i % 90) * interval '1 day' - (i % 1440) * interval '1 minute', gen_random_uuid(), gen_random_uuid(),
          -- the core's amount in doubt (amountInDoubt) of these values: the amount, the shortfall, the fee difference
          case (${types}::text[])[1 + i % ${types.length}]
            when 'settlement_short' then (i * 31) % 100000 when 'fee_above_contract' then (i * 13) % 10000
            when 'fee_mismatch' then null
            else (i * 7919) % 5000000 end
        from generate_series(1, ${n}) as i`;
      await tx.unsafe(discrepancyView(schema, leg));
      await tx`analyze ${tx(schema)}.discrepancies`;
    }
  });
}

/**
 * The page's queries, as a user filters: the default queue, by type, sub-merchant, currency and amount, age,
 * newest first, by severity (severity.ts's rule as SQL over the type, amount_in_doubt and detected_at).
 */
const FILTERS = [
  '',
  'type=amount_mismatch',
  'leg=payouts&type=payout_missing',
  'sub_merchant=sm-17',
  'currency=EUR&min_amount=4000000',
  'older_than_days=30&order=desc',
  'status=&order=desc',
  'severity=high',
  'severity=critical&currency=UAH',
];

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

export async function serve(ctx: BenchContext) {
  const store = createPostgresEventStore(ctx.sql);
  const { token } = await addUser(store, undefined, { id: 'bench-admin', name: 'Bench', role: 'admin' });
  const handler = createConsole({
    sql: ctx.sql,
    store,
    directory: directoryReader(store),
    auditorToken: undefined,
    timezone: 'Europe/Kyiv',
    outDir: '/nonexistent',
    trust: { trustProxy: false, trustedProxies: [] },
    scheduler: { schedules: () => [], runNow: () => Promise.reject(new Error('no jobs in the benchmark')) },
    log: silentLogger,
    loginLimiter: createRejectionLimiter(LOGIN_LIMIT),
  });
  const app = createHttpApp({ routes: [asyncRoute('/console', handler, silentLogger)], log: silentLogger });
  await app.listen(0);
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const r = await fetch(`${base}/console/login`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { app, base, cookie };
}

/** Each filter's first page, then its next pages by the page's own "next" link (keyset), `depth` deep. */
async function pageTimes(base: string, cookie: string, rounds: number, depth: number): Promise<number[]> {
  const ms: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const f of FILTERS) {
      let path = `/console/exceptions?${f}`;
      for (let d = 0; d < depth && path; d++) {
        const t0 = performance.now();
        const res = await fetch(base + path, { headers: { cookie } });
        const text = await res.text();
        ms.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
        const next = /href="(\/console\/exceptions\?[^"]*after=[^"]*)" rel="next"/.exec(text)?.[1];
        path = next ? next.replace(/&amp;/g, '&') : '';
      }
    }
  }
  return ms;
}

/** The same pages' queries run directly (no HTTP, session or page), following the keyset the same way. */
async function directTimes(sql: Sql, rounds: number, depth: number): Promise<number[]> {
  const ms: number[] = [];
  for (let round = 0; round < rounds; round++)
    for (const f of FILTERS) {
      const parsed = parseQueueFilter(new URLSearchParams(f));
      if (!parsed.ok) throw new Error(parsed.problem);
      let filter = parsed.filter;
      for (let d = 0; d < depth; d++) {
        const t0 = performance.now();
        const page = await queuePage(sql, filter);
        ms.push(performance.now() - t0);
        const last = page.rows.at(-1);
        if (!page.more || !last) break;
        filter = { ...filter, after: { at: last.detected_at, id: last.id } };
      }
    }
  return ms;
}

/** The legs' plans of each filter: which read a leg's table through an index, which scanned it whole. */
async function explainFilters(ctx: BenchContext): Promise<void> {
  const scans: string[] = [];
  for (const f of FILTERS) {
    const parsed = parseQueueFilter(new URLSearchParams(f));
    if (!parsed.ok) throw new Error(parsed.problem);
    for (const leg of parsed.filter.legs) {
      const [row] = await ctx.sql<{ 'QUERY PLAN': unknown }[]>`
        explain (format json) ${legPart(ctx.sql, leg, parsed.filter, new Date(), PAGE_SIZE + 1)}`;
      const plan = JSON.stringify(row?.['QUERY PLAN']);
      if (process.env.BENCH_CONSOLE_PLANS) {
        const lines = await ctx.sql<{ 'QUERY PLAN': string }[]>`
          explain analyze ${legPart(ctx.sql, leg, parsed.filter, new Date(), PAGE_SIZE + 1)}`;
        ctx.note(`${f || '(default)'} on ${leg}:\n${lines.map((l) => l['QUERY PLAN']).join('\n')}`);
      }
      if (/"Node Type":"Seq Scan"/.test(plan)) scans.push(`${f || '(default)'} on ${leg}`);
    }
  }
  ctx.note(
    scans.length === 0
      ? `console: EXPLAIN: every filter reads every leg through an index`
      : `console: EXPLAIN: a whole-table scan for ${scans.join('; ')}`,
  );
}

export async function run(ctx: BenchContext): Promise<void> {
  const rows = Number(process.env.BENCH_CONSOLE_ROWS ?? (ctx.quick ? 20_000 : 100_000));
  const rounds = ctx.quick ? 3 : 10;
  const t0 = performance.now();
  await seed(ctx.sql, rows);
  ctx.note(`console: ${rows} discrepancies seeded by SQL in ${Math.round(performance.now() - t0)} ms (4 legs)`);
  await explainFilters(ctx);
  const { app, base, cookie } = await serve(ctx);
  try {
    await pageTimes(base, cookie, 1, 2); // warm up: plans, pool, JIT of the worker
    const page = await pageTimes(base, cookie, rounds, 5);
    const direct = await directTimes(ctx.sql, rounds, 5);
    const ping: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await ctx.sql`select 1`;
      ping.push(performance.now() - t);
    }
    ctx.note(
      `console: ${page.length} page requests (${FILTERS.length} filters, 5 keyset pages each); direct queries p50 ${quantile(direct, 0.5).toFixed(1)} ms; select 1 p50 ${quantile(ping, 0.5).toFixed(2)} ms`,
    );
    ctx.figure({
      name: 'console: exceptions page p50',
      value: quantile(page, 0.5),
      unit: 'ms',
      reference: { name: 'the same queries run directly, p50', value: quantile(direct, 0.5) },
    });
    ctx.figure({
      name: 'console: exceptions page p95',
      value: quantile(page, 0.95),
      unit: 'ms',
      reference: { name: 'the same queries run directly, p95', value: quantile(direct, 0.95) },
      target: { max: 200, text: '< 200 ms (issue 28)' },
    });
  } finally {
    await app.close({ graceMs: 1000 });
  }
}

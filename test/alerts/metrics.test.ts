import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { collectMetrics, type MetricsDeps, metricsText } from '../../src/alerts/metrics';
import { createHttpApp } from '../../src/http/http-app';
import { metricsRoute } from '../../src/http/metrics';
import { silentLogger } from '../../src/log';
import { formatPosition } from '../../src/store/types';
import { useTestStore } from '../support/db';
import { waitVisible } from '../ledger/visible';
import { addBreak, discrepancyTable } from './support';

/**
 * GET /metrics: the Prometheus text parsed back and every value compared with the data it was read from (open
 * exceptions, amount in doubt, jobs' last success, projection lag); the bearer token when one is configured.
 */

const fx = useTestStore();
const NOW = new Date('2026-03-10T12:00:00Z');
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000).toISOString();
const deps = (): MetricsDeps => ({ sql: fx.db.sql, store: fx.store, timezone: 'Europe/Kyiv', now: () => NOW });

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The exposition format's sample lines (comments apart), each label value unescaped. */
function parse(text: string): { samples: Sample[]; help: Map<string, string>; types: Map<string, string> } {
  const samples: Sample[] = [];
  const help = new Map<string, string>();
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const h = /^# HELP (\S+) (.*)$/.exec(line);
    if (h) help.set(h[1]!, h[2]!);
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) types.set(t[1]!, t[2]!);
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_x, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, help, types };
}

const of = (samples: Sample[], name: string) =>
  samples
    .filter((s) => s.name === name)
    .map((s) => ({ ...s.labels, value: s.value }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

async function seed(): Promise<void> {
  await discrepancyTable(fx.db.sql);
  const b = (
    type: string,
    values: Record<string, unknown>,
    currency: string,
    detectedAt: string,
    status?: 'resolved',
  ) => addBreak(fx.db.sql, { type, values, currency, detectedAt, ...(status ? { status } : {}) });
  await b('settlement_missing', { expected: '150000' }, 'UAH', hoursAgo(2));
  await b('settlement_short', { shortfall: '30000' }, 'UAH', hoursAgo(100));
  await b('settlement_unexpected', { amount: '5000' }, 'EUR', hoursAgo(800));
  await b('settlement_unexpected', { amount: '-7000' }, 'EUR', hoursAgo(1));
  await b('settlement_unexpected', { amount: '7000' }, 'EUR', hoursAgo(1.5));
  await b('settlement_missing', { expected: '999' }, 'UAH', hoursAgo(3), 'resolved');
  const run = (job: string, status: string, finished: string) =>
    fx.db.sql`insert into job_runs (job, scheduled_for, trigger, status, worker, started_at, finished_at)
      values (${job}, ${new Date(finished)}, 'schedule', ${status}, 'w', ${new Date(finished)}, ${new Date(finished)})`;
  await run('nightly-reconciliation', 'succeeded', '2026-03-09T00:31:07Z');
  await run('nightly-reconciliation', 'succeeded', '2026-03-10T00:35:00Z');
  await run('nightly-reconciliation-x', 'failed', '2026-03-10T03:00:00Z');
  await run('monthly-statements', 'succeeded', '2026-03-01T04:05:09Z');
  await fx.store.append(
    'metrics-test',
    [1, 2, 3, 4, 5].map((n) => ({ id: randomUUID(), type: 'MetricsTestEvent', version: 1, data: { n } })),
  );
  await waitVisible(fx.db.sql, fx.store);
  const events = await fx.store.readStream('metrics-test');
  const build = (name: string, checkpoint: string | null) =>
    fx.db.sql`insert into projection_builds (schema_name, name, version, build, status, checkpoint)
      values (${`rm_${name}_v1_b1`}, ${name}, 1, 1, 'live', ${checkpoint})`;
  await build('behind', formatPosition(events[1]!.position));
  await build('fresh', null);
  await build('current', formatPosition(events[4]!.position));
}

describe('GET /metrics', () => {
  it('gives every figure exactly as the data has it', async () => {
    await seed();
    const { text, contentType } = await metricsText(await collectMetrics(deps()));
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const { samples, help, types } = parse(text);
    expect(of(samples, 'recon_open_exceptions')).toEqual(
      [
        // critical by type; the age buckets of 2 h, 100 h
        { type: 'settlement_missing', severity: 'critical', currency: 'UAH', age_bucket: 'under 1 day', value: 1 },
        { type: 'settlement_short', severity: 'critical', currency: 'UAH', age_bucket: '3-7 days', value: 1 },
        // medium by type, critical by its age (800 h)
        { type: 'settlement_unexpected', severity: 'critical', currency: 'EUR', age_bucket: 'over 30 days', value: 1 },
        { type: 'settlement_unexpected', severity: 'medium', currency: 'EUR', age_bucket: 'under 1 day', value: 2 },
      ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
    // the resolved one is not in doubt; amounts without sign
    expect(of(samples, 'recon_amount_in_doubt_minor_units')).toEqual([
      { currency: 'EUR', value: 5000 + 7000 + 7000 },
      { currency: 'UAH', value: 150000 + 30000 },
    ]);
    expect(help.get('recon_amount_in_doubt_minor_units')).toContain('minor units');
    expect(of(samples, 'recon_job_last_success_timestamp_seconds')).toEqual([
      { job: 'monthly-statements', value: Date.parse('2026-03-01T04:05:09Z') / 1000 },
      { job: 'nightly-reconciliation', value: Date.parse('2026-03-10T00:35:00Z') / 1000 },
    ]);
    expect(of(samples, 'recon_projection_lag_events')).toEqual([
      { projection: 'behind', value: 3 },
      { projection: 'current', value: 0 },
      { projection: 'fresh', value: 5 },
    ]);
    for (const name of [
      'recon_open_exceptions',
      'recon_amount_in_doubt_minor_units',
      'recon_job_last_success_timestamp_seconds',
      'recon_projection_lag_events',
    ])
      expect(types.get(name), name).toBe('gauge');
    // nothing of prom-client's global registry (process metrics) rides along
    expect(samples.every((s) => s.name.startsWith('recon_'))).toBe(true);
  });

  it('asks for the bearer token when one is set; without one, answers loopback', async () => {
    const serve = async (token: string | undefined) => {
      const app = createHttpApp({ routes: [metricsRoute({ ...deps(), token, log: silentLogger })], log: silentLogger });
      const { url } = await app.listen(0, '127.0.0.1');
      return { url, close: () => app.close() };
    };
    const token = 'metrics-token-0123456789abcdef';
    const guarded = await serve(token);
    try {
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      const wrong = await fetch(`${guarded.url}/metrics`, {
        headers: { authorization: 'Bearer not-the-token-at-all' },
      });
      expect(wrong.status).toBe(401);
      const right = await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(right.status).toBe(200);
      const { samples } = parse(await right.text());
      expect(of(samples, 'recon_amount_in_doubt_minor_units')).toEqual([
        { currency: 'EUR', value: 19000 },
        { currency: 'UAH', value: 180000 },
      ]);
      expect((await fetch(`${guarded.url}/metrics`, { method: 'POST' })).status).toBe(405);
    } finally {
      await guarded.close();
    }
    const open = await serve(undefined);
    try {
      const r = await fetch(`${open.url}/metrics`);
      expect(r.status).toBe(200);
      expect(await r.text()).toContain('# TYPE recon_open_exceptions gauge');
    } finally {
      await open.close();
    }
  });
});

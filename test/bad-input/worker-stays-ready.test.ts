import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, spawnRecon, waitFor } from '../faults/support/processes';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { DAY_AFTER_RANGE, orderCases } from './doors-orders.cases';

/**
 * Issue 23: after the hostile corpus, the worker is still ready. A running `recon start` takes every order
 * case of the corpus on `POST /api/orders` and a few hostile auditor requests; each refused one is a 4xx, the
 * accepted ones are projected, no projection sets anything aside, and `/readyz` says ready (strict too).
 */

const ORDERS_TOKEN = 'orders-token-ready-0123456789';

/**
 * The worker judges dates by the real clock, not the corpus's NOW: the day after its range is ten years and a
 * day from today (two days: today may turn while the request is on its way).
 */
function afterRangeFromToday(record: Readonly<Record<string, string>>): Record<string, string> {
  const day = DateTime.utc().plus({ years: 10, days: 2 }).toISODate();
  return { ...record, created_at: `${day}T00:00:00Z` };
}
const AUDITOR_TOKEN = 'auditor-token-ready-0123456789';
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('recon start after the hostile corpus', () => {
  it('answers 4xx to every refused input, projects the accepted, and stays ready', { timeout: 240_000 }, async () => {
    const env = reconEnv({
      databaseUrl: db.url,
      extra: { RECON_ORDERS_TOKEN: ORDERS_TOKEN, RECON_AUDITOR_TOKEN: AUDITOR_TOKEN },
    });
    const w = spawnRecon(['start', '--port', '0', '--no-scheduler'], env);
    const base = (await w.waitForOutput(/listening on http:\/\/\S+/, 90_000))
      .replace(/^listening on /, '')
      .replace(/\/$/, '');
    const post = (body: string) =>
      fetch(`${base}/api/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ORDERS_TOKEN}`, 'content-type': 'application/json' },
        body,
      });

    let accepted = 0;
    for (const c of orderCases) {
      const res = await post(JSON.stringify(c.name === DAY_AFTER_RANGE ? afterRangeFromToday(c.record) : c.record));
      const body = await res.text();
      if ('refused' in c.outcome) {
        expect(res.status, `${c.name}: ${body}`).toBe(400);
        expect(body, c.name).toContain(c.outcome.refused);
      } else {
        expect(res.status, `${c.name}: ${body}`).toBe(200);
        accepted++;
      }
    }
    // raw bytes the corpus of issue 23 named: NUL in a path or query, a day out of range
    for (const p of ['/api/discrepancies?from=0000-01-01', '/api/discrepancies?type=%00', '/api/operations/%00']) {
      const res = await fetch(`${base}${p}`, { headers: { authorization: `Bearer ${AUDITOR_TOKEN}` } });
      expect(res.status, p).toBeGreaterThanOrEqual(400);
      expect(res.status, p).toBeLessThan(500);
    }

    // the live projections take the accepted orders, and set nothing aside
    await waitFor(
      async () => {
        const rows = await db.sql<{ t: string | null }[]>`select to_regclass('recon.orders')::text as t`;
        if (!rows[0]?.t) return false;
        const [n] = await db.sql<{ n: number }[]>`select count(distinct order_id)::int as n from recon.orders`;
        return (n?.n ?? 0) >= accepted;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: 'the accepted orders projected' },
    );
    expect(accepted).toBeGreaterThan(0);
    const [set] = await db.sql<{ n: number }[]>`select count(*)::int as n from recon.quarantined_events`;
    expect(set?.n).toBe(0);
    const ready = await fetch(`${base}/readyz?strict`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });

    w.kill('SIGTERM');
    expect((await w.exited).code, w.stderr()).toBe(0);
  });
});

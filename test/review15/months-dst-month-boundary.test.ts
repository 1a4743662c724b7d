import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log';
import { closingsByReceiver, statementFigures } from '../../src/ledger/ledger-queries';
import { loadProjections, runProjections, type RunnerDeps } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import { parsePosition } from '../../src/store/types';
import { generateScenario } from '../../src/sandbox/scenario';
import { monthBounds } from '../../src/journal-rules';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { waitVisible } from '../ledger/visible';
import { appendChunks, directoryEvents, operationEvents } from '../../fixtures/scenario-events';

/**
 * A month boundary where the zone's clock changes at local midnight: America/Havana's 2026-11-01 00:00 happens
 * twice (01:00 CDT back to 00:00 CST), America/Asuncion's 2023-10-01 00:00 never (00:00 to 01:00). The month's
 * end was its luxon start plus a month (keeping the start's offset), the next month's start luxon's wall-clock
 * midnight: in Havana an hour (04:00–05:00 UTC) was in no month, in Asuncion one (03:00–04:00 UTC) in both.
 * The journal's months (payable_months) then lost or doubled that hour's lines, so a statement read from them
 * was not the statement summing the lines gives; and summing the lines, a month's closing was not the next
 * one's opening. Every line must be in exactly one month, the one its statement counts it in.
 */

const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const db of dbs) await db.drop();
});

const text = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

async function journalOf(zone: string, ranges: { month?: string; from?: string; to?: string }[]) {
  const db = await createTestDatabase();
  dbs.push(db);
  const store = createPostgresEventStore(db.sql);
  const journal = (await loadProjections()).filter((p) => p.name === 'journal');
  const deps: RunnerDeps = {
    sql: db.sql,
    store,
    log: silentLogger,
    timezone: zone,
    graceHours: 48,
    projections: journal,
  };
  const seed = `months-dst-${zone}`;
  const base = { seed, payments: 40, subMerchants: 3, timezone: zone, injections: 'none' as const };
  await store.appendMany([...appendChunks(directoryEvents(generateScenario({ ...base, ...ranges[0] })), 1000)].flat());
  // the same sub-merchants (same seed) in every range; the rows' positions differ by range
  for (const [i, range] of ranges.entries()) {
    const scenario = generateScenario({ ...base, ...range, seed: `${seed}-${i}` });
    for (const requests of appendChunks(operationEvents(scenario), 25)) {
      await store.appendMany(requests);
      await runProjections(deps, { batchSize: 30 });
    }
  }
  await waitVisible(db.sql, store);
  await runProjections(deps, { batchSize: 30 });
  return db;
}

/** What a query gives summing the lines (the journal's months out of the way, as for a build without them). */
async function byLines<T>(db: TestDatabase, read: () => Promise<T>): Promise<string> {
  const [view] = await db.sql<{ def: string }[]>`select pg_get_viewdef('recon.journal_zone') as def`;
  await db.sql`drop view recon.journal_zone`;
  try {
    return text(await read());
  } finally {
    await db.sql.unsafe(`create view recon.journal_zone as ${view!.def}`);
  }
}

async function checkBoundary(db: TestDatabase, zone: string, before: string, after: string, hour: [string, string]) {
  // the boundary hour has payable lines
  const [inHour] = await db.sql<{ n: number }[]>`
    select count(*)::int as n from recon.journal_lines
    where account = 'payable' and booked_at >= ${hour[0]}::timestamptz and booked_at < ${hour[1]}::timestamptz`;
  expect(inHour!.n).toBeGreaterThan(0);

  // each month row of the journal holds exactly the stated lines its statement's bounds hold
  type MonthRow = { receiver_name: string; currency: string; month: string; amount: string };
  const rows = await db.sql<MonthRow[]>`
    select receiver_name, currency, month, sum(amount)::text as amount from recon.payable_months
    group by 1, 2, 3 having sum(amount) <> 0 order by 1, 2, 3`;
  const months = [...new Set(rows.map((r) => r.month))].sort();
  expect(months).toContain(before);
  expect(months).toContain(after);
  const expected: MonthRow[] = [];
  for (const month of months) {
    const { from, to } = monthBounds(month, zone);
    const sums = await db.sql<{ receiver_name: string; currency: string; amount: string }[]>`
      select receiver_name, currency, sum(-amount)::text as amount from recon.journal_lines
      where account = 'payable' and component not in ('payout', 'write_off') and receiver_name is not null
        and booked_at >= ${from} and booked_at < ${to}
      group by 1, 2 having sum(amount) <> 0`;
    expected.push(...sums.map((s) => ({ ...s, month })));
  }
  const key = (r: MonthRow) => `${r.receiver_name}|${r.currency}|${r.month}`;
  expected.sort((a, b) => (key(a) < key(b) ? -1 : 1));
  expect(rows.map((r) => ({ ...r }))).toEqual(expected);
  // and every stated line is in one of them
  const [all] = await db.sql<{ total: string }[]>`
    select coalesce(sum(-amount), 0)::text as total from recon.journal_lines
    where account = 'payable' and component not in ('payout', 'write_off') and receiver_name is not null`;
  expect(rows.reduce((s, r) => s + BigInt(r.amount), 0n).toString()).toBe(all!.total);

  // the statements and closings read from the months are those summing the lines gives
  const [head] = await db.sql<{ position: string }[]>`
    select position from recon.journal_lines order by commit_pos desc, prepare_pos desc limit 1`;
  const atPosition = parsePosition(head!.position);
  for (const month of [before, after]) {
    const figures = () => statementFigures(db.sql, { month, timezone: zone });
    expect(text(await figures())).toBe(await byLines(db, figures));
    const closings = async () => [...(await closingsByReceiver(db.sql, { month, timezone: zone, atPosition }))].sort();
    expect(text(await closings())).toBe(await byLines(db, closings));
  }

  // summing the lines, a month's closing is the next one's opening
  const closing = new Map(
    JSON.parse(await byLines(db, () => statementFigures(db.sql, { month: before, timezone: zone }))).map(
      (f: { subMerchantId: string; currency: string; closing: string }) => [
        `${f.subMerchantId}|${f.currency}`,
        f.closing,
      ],
    ),
  );
  const next = JSON.parse(await byLines(db, () => statementFigures(db.sql, { month: after, timezone: zone }))) as {
    subMerchantId: string;
    currency: string;
    opening: string;
  }[];
  expect(next.length).toBeGreaterThan(0);
  for (const f of next)
    expect([f.subMerchantId, f.currency, f.opening]).toEqual([
      f.subMerchantId,
      f.currency,
      closing.get(`${f.subMerchantId}|${f.currency}`) ?? '0',
    ]);
}

describe('a month boundary at a clock change', () => {
  it('America/Havana 2026-11-01: the repeated midnight hour is in November, once', async () => {
    const zone = 'America/Havana';
    const hour: [string, string] = ['2026-11-01T04:00:00.000Z', '2026-11-01T05:00:00.000Z'];
    const db = await journalOf(zone, [{ month: '2026-10' }, { from: hour[0], to: hour[1] }, { month: '2026-11' }]);
    await checkBoundary(db, zone, '2026-10', '2026-11', hour);
  });

  it('America/Asuncion 2023-10-01: the skipped midnight leaves no hour in two months', async () => {
    const zone = 'America/Asuncion';
    // 2023-11-01 00:00–01:00 local (−03): the hour October's end took from November
    const hour: [string, string] = ['2023-11-01T03:00:00.000Z', '2023-11-01T04:00:00.000Z'];
    const db = await journalOf(zone, [{ month: '2023-10' }, { from: hour[0], to: hour[1] }, { month: '2023-11' }]);
    await checkBoundary(db, zone, '2023-10', '2023-11', hour);
  });
});

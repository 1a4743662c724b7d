import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log';
import { closingsByReceiver, statementFigures } from '../../src/ledger/ledger-queries';
import { loadProjections, runProjections, type RunnerDeps } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import { parsePosition, type EventStore, type Position } from '../../src/store/types';
import { monthBounds } from '../../src/journal-rules';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { waitVisible } from './visible';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';

/**
 * A statement's opening, movements and a run's closings come from the journal's months
 * (src/ledger/payable-months.ts), not from every line since the company started (issue 26): the same figures
 * as summing the lines, at every cut, in every month, and with the lines of the months before deleted.
 */

const TZ = 'Europe/Kyiv';
const MONTHS = ['2025-01', '2025-02', '2025-03', '2025-04'];
let db: TestDatabase;
let store: EventStore;
let deps: RunnerDeps;

const text = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

/** The figures through each of the three ways the queries can take: the months, no months kept, another zone's. */
async function threeWays<T>(read: () => Promise<T>): Promise<[string, string, string]> {
  const [view] = await db.sql<{ def: string }[]>`select pg_get_viewdef('recon.journal_zone') as def`;
  const months = text(await read());
  await db.sql`drop view recon.journal_zone`;
  const noMonths = text(await read());
  await db.sql.unsafe(`create view recon.journal_zone as select 'UTC'::text as timezone`);
  const otherZone = text(await read());
  await db.sql.unsafe(`create or replace view recon.journal_zone as ${view!.def}`);
  return [months, noMonths, otherZone];
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const journal = (await loadProjections()).filter((p) => p.name === 'journal');
  deps = { sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, projections: journal };
  // three months of operations, applied as they come in small batches (the months added to batch by batch)
  for (const [i, month] of MONTHS.slice(0, 3).entries()) {
    const scenario = scenarioFor({ seed: `payable-months-${i}`, payments: 90, month, timezone: TZ, subMerchants: 5 });
    for (const requests of appendChunks(scenarioEvents(scenario), 60)) {
      await store.appendMany(requests);
      await runProjections(deps, { batchSize: 40 });
    }
  }
  await waitVisible(db.sql, store);
  await runProjections(deps, { batchSize: 40 });
});
afterAll(async () => {
  await db?.drop();
});

describe('the journal keeps each receiver’s payable months', () => {
  it('gives the figures and closings of summing every line, at every cut and in every month', async () => {
    const positions = await db.sql<{ position: string }[]>`
      select distinct position, commit_pos, prepare_pos from recon.journal_lines order by commit_pos, prepare_pos`;
    expect(positions.length).toBeGreaterThan(20);
    const at = (q: number) => parsePosition(positions[Math.floor(q * (positions.length - 1))]!.position);
    const first = at(0);
    // before the first line, at it, and further on (a cut inside every month's bookings)
    const cuts: (Position | undefined)[] = [
      undefined,
      { commit: first.commit, prepare: first.prepare - 1n },
      first,
      at(0.2),
      at(0.5),
      at(0.8),
      at(1),
    ];
    let openings = 0;
    let fewerAtACut = 0;
    for (const month of MONTHS) {
      const all = await statementFigures(db.sql, { month, timezone: TZ });
      for (const cut of cuts) {
        const opts = { month, timezone: TZ, ...(cut ? { atPosition: cut } : {}) };
        const [months, noMonths, otherZone] = await threeWays(() => statementFigures(db.sql, opts));
        expect(months).toBe(noMonths);
        expect(months).toBe(otherZone);
        const figures = JSON.parse(months) as { opening: string }[];
        openings += figures.filter((f) => f.opening !== '0').length;
        if (figures.length < all.length) fewerAtACut++;
        // one sub-merchant's statement reads the same way
        const one = all[0]!.subMerchantId;
        const [m1, n1, o1] = await threeWays(() => statementFigures(db.sql, { ...opts, subMerchantId: one }));
        expect(m1).toBe(n1);
        expect(m1).toBe(o1);
        if (!cut) continue;
        const [c1, c2, c3] = await threeWays(() =>
          closingsByReceiver(db.sql, { month, timezone: TZ, atPosition: cut }),
        );
        expect(c1).toBe(c2);
        expect(c1).toBe(c3);
      }
    }
    // the comparisons met openings carried from earlier months and receivers with no line yet at a cut
    expect(openings).toBeGreaterThan(10);
    expect(fewerAtACut).toBeGreaterThan(0);
  });

  it('reads no line of the months before the statement’s', async () => {
    const month = '2025-03';
    const before = text(await statementFigures(db.sql, { month, timezone: TZ }));
    expect((JSON.parse(before) as { opening: string }[]).some((f) => f.opening !== '0')).toBe(true);
    const [live] = await db.sql<{ schema_name: string }[]>`
      select schema_name from projection_builds where name = 'journal' and status = 'live'`;
    const { from } = monthBounds(month, TZ);
    const gone = await db.sql`delete from ${db.sql(live!.schema_name)}.lines where booked_at < ${from}`;
    await db.sql`delete from ${db.sql(live!.schema_name)}.entries where booked_at < ${from}`;
    expect(gone.count).toBeGreaterThan(100);
    expect(text(await statementFigures(db.sql, { month, timezone: TZ }))).toBe(before);
    // summing the lines would now open every statement at nothing: the lines were what the figures did not read
    await db.sql`drop view recon.journal_zone`;
    expect(text(await statementFigures(db.sql, { month, timezone: TZ }))).not.toBe(before);
  });
});

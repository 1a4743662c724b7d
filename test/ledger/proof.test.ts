import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log';
import { ledgerBalance, trialBalance } from '../../src/ledger/balances';
import { statementFigures, statementLines } from '../../src/ledger/ledger-queries';
import { loadProjections, rebuildProjection, runProjections, type RunnerDeps } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import { parsePosition, type EventStore } from '../../src/store/types';
import { monthBounds } from '../../src/journal-rules';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { waitVisible } from './visible';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';

/**
 * The proof of the runner: the same events fed incrementally (many small appends, each followed by a
 * run with a small batch size) and as one rebuild from zero give identical read models and statements.
 */

const TZ = 'Europe/Kyiv';
const MONTHS = ['2025-01', '2025-02', '2025-03', '2025-04'];
let db: TestDatabase;
let store: EventStore;
let deps: RunnerDeps;

/** md5 of every row of every recon view, in a total order. */
async function digests(): Promise<Record<string, string>> {
  const views = await db.sql<
    { table_name: string }[]
  >`select table_name from information_schema.views where table_schema = 'recon' order by table_name`;
  const out: Record<string, string> = {};
  for (const { table_name } of views) {
    const [r] = await db.sql.unsafe<{ n: bigint; digest: string | null }[]>(
      `select count(*)::int8 as n, md5(string_agg(t::text, E'\\n' order by t::text)) as digest from recon."${table_name}" t`,
    );
    out[table_name] = `${r!.n}:${r!.digest}`;
  }
  return out;
}

async function statements(): Promise<string> {
  const parts: unknown[] = [];
  for (const month of MONTHS) {
    const figures = await statementFigures(db.sql, { month, timezone: TZ });
    parts.push(figures);
    for (const f of figures.slice(0, 4)) {
      const lines = [];
      for await (const l of statementLines(db.sql, {
        month,
        timezone: TZ,
        subMerchantId: f.subMerchantId,
        currency: f.currency,
      }))
        lines.push(l);
      parts.push(lines);
    }
  }
  return JSON.stringify(parts, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  // every projection of projections/ goes through the proof; PROOF_PROJECTIONS=journal,... restricts it
  const all = await loadProjections();
  const names = process.env['PROOF_PROJECTIONS']?.split(',').filter((n) => n && n !== 'all');
  const only = names?.length ? all.filter((p) => names.includes(p.name)) : all;
  deps = { sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48, projections: only };
});
afterAll(async () => {
  await db?.drop();
});

describe('incremental and rebuilt projections agree', () => {
  it('gives identical read models and statements, and the journal balances', async () => {
    const scenario = scenarioFor({ seed: 'proof', payments: 180, month: '2025-01', timezone: TZ });
    let chunks = 0;
    for (const requests of appendChunks(scenarioEvents(scenario), 37)) {
      await store.appendMany(requests);
      chunks++;
      if (chunks % 3 === 0) await runProjections(deps, { batchSize: 50 });
    }
    await waitVisible(db.sql, store);
    const last = await runProjections(deps, { batchSize: 50 });
    expect(chunks).toBeGreaterThan(10);
    for (const p of last.projections) expect(p.position).toBe(last.head);
    expect(last.projections.map((p) => p.name)).toContain('journal');

    const incremental = await digests();
    const incrementalStatements = await statements();
    expect(Object.keys(incremental)).toEqual(
      expect.arrayContaining(['journal_entries', 'journal_lines', 'settlement_ledger', 'sub_merchants']),
    );
    expect(incremental['journal_lines']!.startsWith('0:')).toBe(false);

    const rebuilt = await rebuildProjection(deps, undefined, { batchSize: 5000 });
    for (const p of rebuilt.projections) expect(p.wentLive).toBe(true);
    expect(await digests()).toEqual(incremental);
    expect(await statements()).toBe(incrementalStatements);

    // the journal nets to zero per currency, and so does every entry
    const trial = await trialBalance(db.sql);
    const byCurrency = new Map<string, bigint>();
    for (const t of trial) byCurrency.set(t.currency, (byCurrency.get(t.currency) ?? 0n) + t.balance);
    expect([...byCurrency.values()].every((v) => v === 0n)).toBe(true);
    expect(trial.find((t) => t.account === 'payable')!.balance).toBeLessThan(0n);
    const perCurrency = await db.sql<
      { currency: string; total: bigint }[]
    >`select currency, sum(amount)::int8 as total from recon.journal_lines group by currency`;
    expect(perCurrency.length).toBeGreaterThan(0);
    for (const c of perCurrency) expect(c.total).toBe(0n);
    const [unbalanced] =
      await db.sql`select entry_id from recon.journal_lines group by entry_id having sum(amount) <> 0 limit 1`;
    expect(unbalanced).toBeUndefined();

    // some rows were replaced by a later observation (reversals exist) and statements only count the latest
    const [rev] = await db.sql<
      { n: bigint }[]
    >`select count(*)::int8 as n from recon.journal_entries where kind = 'reversal'`;
    expect(rev!.n).toBeGreaterThan(0n);

    // opening + movements = closing, month after month, and the closing is the balance at the next month's start
    const all = await Promise.all(MONTHS.map((month) => statementFigures(db.sql, { month, timezone: TZ })));
    for (let i = 0; i < MONTHS.length; i++) {
      for (const f of all[i]!) {
        expect(f.netPayable).toBe(f.gross - f.refunds - f.chargebacks - f.fees - f.reserveHeld + f.reserveReleased);
        expect(f.closing).toBe(f.opening + f.netPayable);
        const next = monthBounds(MONTHS[i]!, TZ).to;
        expect(
          await ledgerBalance(db.sql, {
            subMerchantId: f.subMerchantId,
            currency: f.currency,
            account: 'payable',
            at: next,
          }),
        ).toBe(f.closing);
        const following = all[i + 1]?.find((g) => g.subMerchantId === f.subMerchantId && g.currency === f.currency);
        if (following) expect(following.opening).toBe(f.closing);
      }
    }
    // reserves held in January are released later (90 days by default, or the directory's hold)
    const released = all
      .slice(1)
      .flat()
      .reduce((s, f) => s + f.reserveReleased, 0n);
    expect(all[0]!.reduce((s, f) => s + f.reserveHeld, 0n)).toBeGreaterThan(0n);
    expect(released).toBeGreaterThan(0n);

    // a statement cut at an earlier position equals the one computed when the store was there
    const [mid] = await db.sql<{ position: string }[]>`
      select position from recon.journal_entries where kind = 'reversal' order by commit_pos, prepare_pos limit 1`;
    const cut = parsePosition(mid!.position);
    const atCut = await statementFigures(db.sql, { month: '2025-01', timezone: TZ, atPosition: cut });
    const beforeCut = await statementFigures(db.sql, {
      month: '2025-01',
      timezone: TZ,
      atPosition: { commit: cut.commit, prepare: cut.prepare - 1n },
    });
    expect(atCut).not.toEqual(beforeCut);
  });
});

import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';
import { CLOCK_DATA_FIELDS, CLOCK_EVENTS } from '../../projections/clock-events';
import { newEvent } from '../../src/events/catalog';
import { BankEntryForUnknownAccount } from '../../src/events/bank-events';
import { StatementSendFailed, statementDeliveryStream } from '../../src/events/delivery-events';
import { silentLogger } from '../../src/log';
import type { AnyEvent } from '../../src/projector/handlers';
import type { Projection } from '../../src/projector/projection';
import { loadProjections, type RunnerDeps } from '../../src/projector/runner';
import type { RecordedEvent } from '../../src/store/types';
import { useTestStore } from '../support/db';
import { catchUp, projectionSpec, replayInBatches } from '../support/projection-spec';
import { appendVisible, tallyEvents } from './tally';

/**
 * The projection contract states what it handles (issue 24, after emmett's `canHandle`): every projection of
 * projections/ lists the event definitions it reads; the runner moves the checkpoint past a batch holding
 * none of them without applying it (src/projector/checkpoints.ts), and the read models equal a replay that
 * applied every batch.
 */

const EVENTS_DIR = path.resolve(__dirname, '../../src/events');

/** Every event definition src/events exports. */
async function allDefinitions(): Promise<AnyEvent[]> {
  const out: AnyEvent[] = [];
  for (const f of readdirSync(EVENTS_DIR).filter((n) => n.endsWith('.ts'))) {
    const mod = (await import(path.join(EVENTS_DIR, f))) as Record<string, unknown>;
    for (const v of Object.values(mod)) {
      const d = v as Partial<AnyEvent>;
      if (d && typeof d === 'object' && typeof d.type === 'string' && typeof d.version === 'number' && d.schema)
        out.push(d as AnyEvent);
    }
  }
  return out;
}

describe('what each projection handles', () => {
  it('every projection of projections/ lists event definitions of src/events, once each', async () => {
    const defs = new Set(await allDefinitions());
    const projections = await loadProjections();
    expect(projections.map((p) => p.name).sort()).toEqual(
      [
        'audit',
        'bank',
        'exceptions',
        'journal',
        'operations_seen',
        'orders',
        'payouts',
        'reconciliation',
        'settlement',
      ].sort(),
    );
    for (const p of projections) {
      expect(Array.isArray(p.handles), p.name).toBe(true);
      const handles = p.handles as readonly AnyEvent[];
      expect(handles.length, p.name).toBeGreaterThan(0);
      for (const d of handles) expect(defs.has(d), `${p.name}: ${d.type}`).toBe(true);
      expect(new Set(handles.map((d) => d.type)).size, p.name).toBe(handles.length);
    }
  });

  it('the clock events are every definition whose data carries a time the clocks read', async () => {
    const carrying = (await allDefinitions()).filter((d) => {
      const shape = (d.schema as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
      return CLOCK_DATA_FIELDS.some((f) => f in shape);
    });
    expect(carrying.length).toBeGreaterThan(0);
    for (const d of carrying) expect(CLOCK_EVENTS, d.type).toContain(d);
    // the reconciliation, the orders and the payouts judge by that clock: each handles every clock event
    const byName = new Map((await loadProjections()).map((p) => [p.name, p.handles as readonly AnyEvent[]]));
    for (const name of ['reconciliation', 'orders', 'payouts'])
      for (const d of CLOCK_EVENTS) expect(byName.get(name), `${name}: ${d.type}`).toContain(d);
  });
});

describe('the runner skips a batch with none of the types a projection handles', () => {
  const fx = useTestStore();
  const ev = tallyEvents();

  /** Records the batches handed to apply; handles only BankEntryForUnknownAccount. */
  function recorder(): { p: Projection; batches: string[][] } {
    const batches: string[][] = [];
    const p: Projection = {
      name: 'recorder',
      version: 1,
      handles: [BankEntryForUnknownAccount],
      async setup() {},
      async apply(_tx, events: readonly RecordedEvent[]) {
        batches.push(events.map((e) => e.type));
      },
      views: () => [],
    };
    return { p, batches };
  }

  it('does not call apply, moves the checkpoint to the head and counts the events gone past', async () => {
    const { p, batches } = recorder();
    const deps: RunnerDeps = {
      sql: fx.db.sql,
      store: fx.store,
      log: silentLogger,
      timezone: 'UTC',
      graceHours: 48,
      projections: [p],
    };
    await appendVisible(fx.store, fx.db.sql, 'skip-a', [ev('x', 1), ev('x', 2)]);
    await appendVisible(fx.store, fx.db.sql, 'skip-b', [ev('x', 3)]);
    const first = await catchUp(deps, { batchSize: 2 });
    expect(batches).toEqual([]);
    expect(first.projections[0]).toMatchObject({ name: 'recorder', status: 'live', applied: 3 });
    expect(first.projections[0]!.position).toBe(first.head);
    const [build] = await fx.db.sql<{ checkpoint: string; events_applied: bigint }[]>`
      select checkpoint, events_applied from projection_builds where name = 'recorder' and status = 'live'`;
    expect(build).toEqual({ checkpoint: first.head, events_applied: 3n });

    // a batch holding one handled event is applied whole (the others of the batch with it)
    const handled = { id: crypto.randomUUID(), type: BankEntryForUnknownAccount.type, version: 1, data: {} };
    await appendVisible(fx.store, fx.db.sql, 'skip-c', [ev('x', 4), handled]);
    const second = await catchUp(deps, { batchSize: 1000 });
    expect(batches).toEqual([['Tallied', BankEntryForUnknownAccount.type]]);
    expect(second.projections[0]!.position).toBe(second.head);
  });
});

describe('read models are the same with and without the skip (replay equality)', () => {
  const fx = useTestStore();
  const TZ = 'Europe/Kyiv';

  /** md5 of every row of every recon view, in a total order. */
  async function digests(): Promise<Record<string, string>> {
    const views = await fx.db.sql<{ table_name: string }[]>`
      select table_name from information_schema.views where table_schema = 'recon' order by table_name`;
    const out: Record<string, string> = {};
    for (const { table_name } of views) {
      const [r] = await fx.db.sql.unsafe<{ n: bigint; digest: string | null }[]>(
        `select count(*)::int8 as n, md5(string_agg(t::text, E'\\n' order by t::text)) as digest from recon."${table_name}" t`,
      );
      out[table_name] = `${r!.n}:${r!.digest}`;
    }
    return out;
  }

  it('gives identical rows in every view, live and replayed at several batch sizes', async () => {
    const real = await loadProjections();
    const deps = (projections: readonly Projection[]): RunnerDeps => ({
      sql: fx.db.sql,
      store: fx.store,
      log: silentLogger,
      timezone: TZ,
      graceHours: 48,
      projections,
    });
    const scenario = scenarioFor({ seed: 'handles', payments: 12, month: '2025-01', timezone: TZ });
    // small appends (a batch never splits one): batches of 2 then hold one or two appends of a few events
    const given = [...appendChunks(scenarioEvents(scenario), 3)];
    // a statement's failed sending weeks later moves the reconciliation's clock: payments whose grace ran out
    // are judged at it, so skipping it would change the rows
    const failed = newEvent(StatementSendFailed, {
      month: '2025-01',
      subMerchantId: 'sm-1',
      to: 'finance@example.com',
      files: [{ name: 'statement.pdf', sha256: 'a'.repeat(64) }],
      resend: 0,
      attempt: 1,
      error: 'connection refused',
      failedAt: '2025-03-01T00:00:00.000Z',
    });
    const when = { stream: statementDeliveryStream('2025-01'), events: [failed] };

    // the reference: every projection applies every batch (as before projections declared what they handle)
    const everything = real.map((p) => ({ ...p, handles: 'every event' as const }));
    const spec = projectionSpec(() => deps(real), { batchSizes: [2, 1000] });
    let reference: Record<string, string> | undefined;
    await spec
      .given(...given)
      .when(when)
      .expect(async (_sql, run) => {
        if (reference === undefined) {
          // first call (live): build the reference beside, then back to the projections as they are
          const live = await digests();
          await replayInBatches(deps(everything), 2);
          reference = await digests();
          expect(live, run).toEqual(reference);
          await replayInBatches(deps(real), 2);
        }
        expect(await digests(), run).toEqual(reference);
      });
    expect(Object.keys(reference!)).toEqual(expect.arrayContaining(['journal_lines', 'discrepancies', 'bank_entries']));
    expect(reference!['discrepancies']!.startsWith('0:')).toBe(false);
  }, 300_000);
});

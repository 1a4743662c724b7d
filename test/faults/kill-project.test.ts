import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProjections } from '../../src/projector/runner';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon, spawnRecon, waitFor } from './support/processes';
import { ingestScenario } from './support/scenario';
import { eventsUpTo, projectionState, viewDigests } from './support/store-checks';

/**
 * `kill -9` of `recon project` while it applies batches (small batches, so that the kill lands between
 * and inside them), then `recon project` again: every batch is applied exactly once (a build's checkpoint,
 * its events-applied count and its rows always agree), and the read models equal those of an
 * uninterrupted build from zero over the same events (`recon project --rebuild`).
 */
let sandbox: Sandbox;
let db: TestDatabase;

beforeAll(async () => {
  sandbox = await startSandbox({
    scenario: { seed: 'faults-kill-project', month: '2025-01', timezone: 'Europe/Kyiv', payments: 800 },
    faults: { reportNotReadyPolls: 0 },
  });
  db = await createTestDatabase();
  await ingestScenario(db.sql, sandbox, { from: '2025-01-01', to: '2025-02-01', timezone: 'Europe/Kyiv' });
});

afterAll(async () => {
  await killAll();
  await sandbox?.close();
  await db?.drop();
});

/** every read model in projections/ */
const PROJECTIONS = (await loadProjections()).map((p) => p.name).sort();

interface BuildRow {
  name: string;
  schema_name: string;
  status: string;
  checkpoint: string | null;
  applied: number;
}

async function builds(): Promise<BuildRow[]> {
  return db.sql<BuildRow[]>`
    select name, schema_name, status, checkpoint, events_applied::int as applied from projection_builds
    where status in ('building', 'live') order by name`;
}

/** Journal rows written by events after the build's checkpoint (a batch half-applied would leave some). */
async function journalRowsBeyond(b: BuildRow): Promise<number> {
  const [commit, prepare] = (b.checkpoint ?? '0/0').split('/');
  const [r] = await db.sql.unsafe<{ n: number }[]>(
    `select (select count(*) from "${b.schema_name}".entries where (commit_pos, prepare_pos) > ($1::numeric, $2::numeric))
          + (select count(*) from "${b.schema_name}".lines where (commit_pos, prepare_pos) > ($1::numeric, $2::numeric)) as n`,
    [commit!, prepare!],
  );
  return Number(r!.n);
}

describe('kill -9 in the middle of a projection batch', () => {
  it('applies every event exactly once after a restart, with the read models of an uninterrupted build', async () => {
    const env = reconEnv({ databaseUrl: db.url, timezone: 'Europe/Kyiv' });
    const { events: total } = await projectionState(db.sql);
    expect(total).toBeGreaterThan(3000);

    const victim = spawnRecon(['project', '--batch', '100'], env);
    // Killed once a few batches are committed: the runner is then reading or applying the next one.
    await waitFor(
      async () => {
        const bs = await builds().catch(() => []);
        return bs.length === PROJECTIONS.length && bs.every((b) => b.applied >= 300) ? bs : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 10, what: 'a few committed batches' },
    );
    victim.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');

    const cut = await builds();
    expect(cut.some((b) => b.applied < total)).toBe(true); // really interrupted
    for (const b of cut) {
      // data and checkpoint committed together: the count applied is exactly the events up to the checkpoint
      expect(b.applied).toBe(await eventsUpTo(db.sql, b.checkpoint!));
      if (b.name === 'journal') expect(await journalRowsBeyond(b)).toBe(0);
    }

    const again = await runRecon(['project', '--batch', '100'], env);
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    const resumed = await projectionState(db.sql);
    expect(resumed.builds.map((b) => b.name)).toEqual(PROJECTIONS);
    for (const b of resumed.builds) {
      expect(b.checkpoint).toBe(resumed.head);
      expect(b.applied).toBe(total);
    }
    const afterCrash = await viewDigests(db.sql);
    expect(Object.keys(afterCrash).length).toBeGreaterThan(8);
    expect(afterCrash.journal_entries).not.toMatch(/^0:/);

    const rebuilt = await runRecon(['project', '--rebuild'], env);
    expect(rebuilt.code, rebuilt.stderr.slice(-2000)).toBe(0);
    const fresh = await projectionState(db.sql);
    for (const b of fresh.builds) {
      expect(b.checkpoint).toBe(fresh.head);
      expect(b.applied).toBe(total);
    }
    expect((await builds()).map((b) => b.schema_name)).not.toEqual(cut.map((b) => b.schema_name));
    expect(await viewDigests(db.sql)).toEqual(afterCrash);
  }, 180_000); // five projections to build, twice, on a loaded machine
});

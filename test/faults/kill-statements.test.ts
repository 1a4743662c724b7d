import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerPosition, statementRuns } from '../../src/export/statements/issue';
import { runProjections } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import { formatPosition } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon, spawnRecon, waitFor } from './support/processes';
import { ingestScenario } from './support/scenario';
import { recordedTypes } from './support/store-checks';
import { listOutput, sha256File, workbookDigest } from './support/workbooks';

/**
 * `kill -9` of `recon statements` while it writes (many sub-merchants, one workbook each): no file under a
 * final name is partial (each one there is complete and equal to the uninterrupted run's), the run is not
 * recorded, and the same command again writes the same statements, byte for byte those the uninterrupted run
 * recorded, and records nothing new.
 */
const MONTH = '2025-01';
let sandbox: Sandbox;
let db: TestDatabase;
let dir: string;

beforeAll(async () => {
  // many sub-merchants (the statements the kill falls among), about ten payments each: what is under test is
  // the kill between and inside files, not a statement's length (it had 1,500 payments, all ingested and written
  // three times)
  sandbox = await startSandbox({
    scenario: { seed: 'faults-kill-statements', month: MONTH, timezone: 'UTC', payments: 600, subMerchants: 60 },
    faults: { reportNotReadyPolls: 0 },
  });
  db = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'recon-faults-statements-'));
  await ingestScenario(db.sql, sandbox, { from: '2025-01-01', to: '2025-02-01', timezone: 'UTC' });
  await runProjections(
    { sql: db.sql, store: createPostgresEventStore(db.sql), log: silentLogger, timezone: 'UTC', graceHours: 48 },
    { names: ['journal'] },
  );
});

afterAll(async () => {
  await killAll();
  await sandbox?.close();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 in the middle of a statement run', () => {
  // the run cuts at the journal's checkpoint the test built (--no-catch-up): what is under test is the kill, not the catch-up
  it('leaves no partial file under a final name, and the rerun writes what an uninterrupted run writes', async () => {
    const env = reconEnv({ databaseUrl: db.url });
    const position = formatPosition((await ledgerPosition(db.sql))!);
    const referenceDir = path.join(dir, 'reference');

    // over 40 workbooks and PDFs: a minute is not enough on a loaded 2-core machine
    const reference = await runRecon(
      ['statements', '--month', MONTH, '--out', referenceDir, '--no-catch-up'],
      env,
      150_000,
    );
    expect(reference.code, reference.stderr.slice(-2000)).toBe(0);
    const [refRun] = await statementRuns(db.sql, { month: MONTH });
    expect(refRun!.position).toBe(position);
    expect(refRun!.statements).toBeGreaterThan(40);
    const refFiles = listOutput(referenceDir);
    expect(refFiles.partials).toEqual([]);
    expect(refFiles.finals).toEqual(refRun!.files.map((f) => f.name).sort());
    const refDigests = new Map<string, string>();
    for (const name of refFiles.finals) refDigests.set(name, await workbookDigest(path.join(referenceDir, name)));

    // Killed while a workbook is being written, after some others were finished. The partial file seen may be
    // renamed in the instant before the kill lands; the kill is then tried again on a fresh directory, so that
    // what is checked is always a kill inside a file.
    let out = '';
    let cut: ReturnType<typeof listOutput> = { finals: [], partials: [], other: [] };
    for (let attempt = 1; attempt <= 5 && cut.partials.length === 0; attempt++) {
      out = path.join(dir, `out-${attempt}`);
      cut = await killWhileWriting(out, env);
    }
    expect(cut.other).toEqual([]);
    expect(cut.partials.length).toBeGreaterThan(0);
    expect(cut.finals.length).toBeLessThan(refFiles.finals.length);
    expect(cut.finals).not.toContain(`payouts-${MONTH}.xlsx`); // the index is written last
    // Every file under a final name is a whole workbook, identical in content to the uninterrupted run's.
    for (const name of cut.finals) expect(await workbookDigest(path.join(out, name)), name).toBe(refDigests.get(name));
    expect(await statementRuns(db.sql, { month: MONTH })).toHaveLength(1); // the killed run is not recorded
    expect(await recordedTypes(db.sql, 'statements-%')).toEqual({ StatementIssued: 1 });

    const again = await runRecon(['statements', '--month', MONTH, '--out', out, '--no-catch-up'], env, 150_000);
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    // same position, same figures: the same run, recorded once
    expect(again.stdout).toMatch(/unchanged since the statements issued on \d{4}-\d{2}-\d{2} .*nothing recorded/);
    const runs = await statementRuns(db.sql, { month: MONTH });
    expect(runs.map((r) => r.runId)).toEqual([refRun!.runId]);
    expect(await recordedTypes(db.sql, 'statements-%')).toEqual({ StatementIssued: 1 });

    const done = listOutput(out);
    expect(done.finals).toEqual(refFiles.finals);
    // the files on disk are the uninterrupted run's, byte for byte: the run record describes them
    for (const f of refRun!.files) expect(sha256File(path.join(out, f.name)), f.name).toBe(f.sha256);
    // The killed run's temporary files stay hidden under their temporary names (see docs/reliability.md).
    expect(done.partials).toEqual(cut.partials);
  }, 420_000);
});

async function killWhileWriting(out: string, env: NodeJS.ProcessEnv): Promise<ReturnType<typeof listOutput>> {
  const victim = spawnRecon(['statements', '--month', MONTH, '--out', out, '--no-catch-up'], env);
  await waitFor(
    () => {
      try {
        const now = listOutput(out);
        return now.finals.length >= 3 && now.partials.length > 0 ? true : undefined;
      } catch {
        return undefined; // the directory does not exist yet
      }
    },
    { timeoutMs: 120_000, intervalMs: 2, what: 'a statement being written' },
  );
  victim.kill('SIGKILL');
  expect((await victim.exited).signal).toBe('SIGKILL');
  return listOutput(out);
}

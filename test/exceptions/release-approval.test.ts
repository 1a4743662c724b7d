import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODE } from '../../src/cli/errors';
import { exceptionsConfigFrom } from '../../src/config/exceptions';
import { approveDecision, proposeDecision } from '../../src/exceptions/actions';
import { applyDecisionRows } from '../../src/exceptions/bulk';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { DEFAULT_EXCEPTION_POLICY, needsSecondPerson } from '../../src/exceptions/severity';
import { decisionInForce } from '../../src/reconciliation/decisions';
import { discrepancyStream } from '../../src/events/audit-events';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from './support';

/**
 * Releasing held money (the decision `pay`) is as final as writing it off: above `exceptions.pay.approvalAbove`
 * (default 1,000.00 in minor units, as the write-off's; per currency `approvalAboveByCurrency`; null: never) it
 * waits for a second person; releases of one action that together pass the limit each wait; and
 * `recon discrepancies accept --decision pay`, which has no second person, refuses such a release.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let mismatch = ''; // amount_mismatch: 100.00 UAH in doubt, holds money
let orphan = ''; // payment_without_order: 26.00 UAH in doubt, holds money
const NOW = new Date('2024-03-15T12:00:00.000Z');
let tick = 0;
const dir = mkdtempSync(path.join(tmpdir(), 'release-approval-'));

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  mismatch = await idOf(db.sql, 'amount_mismatch');
  orphan = await idOf(db.sql, 'payment_without_order');
}, 120_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const depsWith = (pay: unknown): ExceptionDeps => {
  const { config, issues } = exceptionsConfigFrom({ pay });
  expect(issues).toEqual([]);
  return { sql: db.sql, store, policy: exceptionPolicyOf(config).policy, now: () => new Date(NOW.getTime() + ++tick) };
};

describe('a release of held money above the limit needs a second person', () => {
  it('the policy: the default limit is the write-off one; per currency; null is no limit; a bad value named', () => {
    expect(needsSecondPerson(DEFAULT_EXCEPTION_POLICY, 'pay', 100_001n, 'UAH')).toBe(true);
    expect(needsSecondPerson(DEFAULT_EXCEPTION_POLICY, 'pay', 100_000n, 'UAH')).toBe(false);
    expect(needsSecondPerson(DEFAULT_EXCEPTION_POLICY, 'withhold', 10n ** 12n, 'UAH')).toBe(false);
    const eur = exceptionPolicyOf(
      exceptionsConfigFrom({ pay: { approvalAbove: '100000', approvalAboveByCurrency: { EUR: 5000 } } }).config,
    ).policy;
    expect(needsSecondPerson(eur, 'pay', 5001n, 'EUR')).toBe(true);
    expect(needsSecondPerson(eur, 'pay', 5001n, 'UAH')).toBe(false);
    const never = exceptionPolicyOf(exceptionsConfigFrom({ pay: { approvalAbove: null } }).config).policy;
    expect(needsSecondPerson(never, 'pay', 10n ** 15n, 'UAH')).toBe(false);
    expect(exceptionsConfigFrom({ pay: { approvalAbove: '12.50' } }).issues).toEqual([
      'exceptions.pay.approvalAbove: expected whole minor units',
    ]);
    expect(exceptionsConfigFrom({ pay: { limit: '1' } }).issues).toEqual([expect.stringMatching(/^exceptions\.pay/)]);
  });

  it('a Decisions sheet of two releases under the limit each, above it together: each waits', async () => {
    // 100.00 and 26.00 UAH each under 110.00, 126.00 together above it
    const deps = depsWith({ approvalAbove: '11000' });
    const rows = [
      { row: 2, request: { action: 'accept' as const, id: mismatch, decision: 'pay', note: 'PSP confirmed' } },
      { row: 3, request: { action: 'accept' as const, id: orphan, decision: 'pay', note: 'order found' } },
    ];
    const dry = await applyDecisionRows(deps, team.analyst, rows, { dryRun: true });
    expect(dry.ok).toBe(true);
    if (!dry.ok) return;
    expect(dry.changes.map((c) => c.summary)).toEqual([
      "propose pay (needs a second person's approval)",
      "propose pay (needs a second person's approval)",
    ]);
    // one of them alone is in force on one person's word
    const one = await applyDecisionRows(deps, team.analyst, rows.slice(1), { dryRun: true });
    expect(one.ok && one.changes.map((c) => c.summary)).toEqual(['accept: pay']);
  });

  it('recon discrepancies accept --decision pay above the limit is refused, naming how to propose it', () => {
    const config = path.join(dir, 'recon.json');
    writeFileSync(config, JSON.stringify({ exceptions: { pay: { approvalAbove: '5000' } } }));
    const r = spawnSync(
      process.execPath,
      [
        path.resolve('bin/recon.mjs'),
        'discrepancies',
        'accept',
        mismatch,
        '--note',
        'PSP confirmed',
        '--decision',
        'pay',
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          DATABASE_URL: db.url,
          RECON_TIMEZONE: 'UTC',
          RECON_LOG_LEVEL: 'error',
          RECON_CONFIG: config,
          RECON_TOKEN: team.analyst.token,
        },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(r.status).toBe(EXIT_CODE.usage);
    expect(r.stderr).toContain(
      `releasing 100.00 UAH held is above what one person releases alone (exceptions.pay.approvalAbove): propose it with recon exceptions accept ${mismatch} --decision pay`,
    );
  });

  it('through the exceptions: proposed, then approved by another person, the release is in force in their name', async () => {
    const deps = depsWith({ approvalAbove: '5000' });
    const p = await proposeDecision(deps, team.analyst, { id: mismatch, decision: 'pay', note: 'PSP confirmed' });
    expect(p.summary).toBe("propose pay (needs a second person's approval)");
    expect(decisionInForce(await store.readStream(discrepancyStream(mismatch)))).toBeNull();
    await project(db.sql, store);
    await approveDecision(deps, team.approver, { id: mismatch, note: 'checked the PSP report' });
    const inForce = decisionInForce(await store.readStream(discrepancyStream(mismatch)));
    expect(inForce).toMatchObject({ decision: 'pay', data: { acceptedBy: team.approver.id, amount: '10000' } });
  });
});

import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { EXIT_CODE } from '../../src/cli/errors';
import { DiscrepancyAcceptanceRevoked, discrepancyStream } from '../../src/events/audit-events';
import { isEvent } from '../../src/events/catalog';
import { resolveExceptionByHand } from '../../src/exceptions/actions';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import type { EventStore } from '../../src/store/types';
import type { TestDatabase } from '../support/db';
import { idOf, project, type Team } from '../exceptions/support';
import { actionForm, consoleFixture, consoleLogin, consolePost } from '../review13/console-support';

/**
 * Review 14: an approver opens an exception an analyst resolved by hand and reopens it (the evidence was wrong).
 * Between the page and the click another person accepts the discrepancy with `recon discrepancies accept`, which
 * writes on the discrepancy's stream only: the exception's revision the reopening is checked against stays as it
 * was read, so the reopening went through and revoked that acceptance, a decision the approver never saw. The
 * reopen form (and the API's optional `acceptance`) now names the decision in force shown (none here), and another
 * one in force by then is refused (409, nothing written); `recon exceptions reopen --acceptance` names it too.
 */

const BIN = path.resolve('bin/recon.mjs');

let db: TestDatabase;
let store: EventStore;
let team: Team;
let srv: { base: string; close: () => Promise<void> };
let unpaid = ''; // order_not_at_psp: holds no money, may be resolved by hand

let f: Awaited<ReturnType<typeof consoleFixture>>;

beforeAll(async () => {
  f = await consoleFixture();
  ({ db, store, team, srv } = f);
  unpaid = await idOf(db.sql, 'order_not_at_psp');
}, 120_000);

afterAll(async () => {
  await f?.close();
});

const revocations = async () =>
  (await store.readStream(discrepancyStream(unpaid))).filter((e) => isEvent(DiscrepancyAcceptanceRevoked, e));

/** The reopen form's fields as the exception's page wrote them. */
const reopenForm = (cookie: string) => actionForm(srv.base, cookie, unpaid, 'reopen');

describe('review14: a reopening from the console revokes only the decision its page showed', () => {
  it('refuses to revoke an acceptance taken outside the exception after the page was shown', async () => {
    const deps = { sql: db.sql, store };
    await resolveExceptionByHand(deps, team.analyst, {
      id: unpaid,
      reasonCode: 'timing',
      note: 'the PSP books it tomorrow',
    });
    await project(db.sql, store);
    const { cookie } = await consoleLogin(srv.base, team.approver.token);
    const shown = await reopenForm(cookie);

    // meanwhile: `recon discrepancies accept`, on the discrepancy's stream alone
    const accepted = await acceptDiscrepancy(deps, {
      id: unpaid,
      note: 'the customer paid in cash',
      by: team.analyst.id,
      at: new Date(),
    });
    expect(accepted.ok).toBe(true);
    await project(db.sql, store);

    const reason = { reason: 'the hand resolution was wrong' };
    const r = await consolePost(srv.base, `/console/exceptions/${unpaid}/reopen`, cookie, { ...shown, ...reason });
    expect(await revocations()).toHaveLength(0);
    expect(r.status).toBe(409);
    expect(await r.text()).toContain('reopening would revoke it unseen');

    // looked at again: the page shows the acceptance, and reopening it revokes that one
    const again = await reopenForm(cookie);
    expect(again.acceptance).toBe(accepted.ok ? accepted.eventId : '');
    const done = await consolePost(srv.base, `/console/exceptions/${unpaid}/reopen`, cookie, { ...again, ...reason });
    expect(done.status).toBe(303);
    expect(await revocations()).toHaveLength(1);
  });

  it('recon exceptions reopen --acceptance: refused when another decision is in force than the one shown', async () => {
    const deps = { sql: db.sql, store };
    await project(db.sql, store);
    await resolveExceptionByHand(deps, team.analyst, { id: unpaid, reasonCode: 'timing', note: 'booked tomorrow' });
    const shown = await recon(['exceptions', 'show', unpaid], team.approver.token);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('state resolved_by_hand');
    expect(shown.stdout).not.toContain('decision in force');
    const accepted = await acceptDiscrepancy(deps, {
      id: unpaid,
      note: 'paid in cash',
      by: team.analyst.id,
      at: new Date(),
    });
    expect(accepted.ok).toBe(true);

    const reopen = ['exceptions', 'reopen', unpaid, '--reason', 'the hand resolution was wrong'];
    const before = (await revocations()).length;
    const r = await recon([...reopen, '--acceptance', 'none'], team.approver.token);
    expect(r.stderr).toContain('reopening would revoke it unseen');
    expect(r.code).toBe(EXIT_CODE.usage);
    expect(await revocations()).toHaveLength(before);

    const now = await recon(['exceptions', 'show', unpaid], team.approver.token);
    const id = accepted.ok ? accepted.eventId : '';
    expect(now.stdout).toContain(`(acceptance ${id})`);
    const done = await recon([...reopen, '--acceptance', id], team.approver.token);
    expect(done.code, done.stderr).toBe(0);
    expect(await revocations()).toHaveLength(before + 1);
  }, 600_000);
});

function recon(args: string[], token: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({ databaseUrl: db.url, extra: { RECON_LOG_LEVEL: 'error', RECON_TOKEN: token } }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

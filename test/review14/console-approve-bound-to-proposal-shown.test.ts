import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { dataOf, isEvent } from '../../src/events/catalog';
import { ExceptionDecisionApproved, exceptionStream } from '../../src/events/exception-events';
import { proposeDecision, rejectDecision } from '../../src/exceptions/actions';
import type { ExceptionDeps } from '../../src/exceptions/context';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import type { EventStore } from '../../src/store/types';
import type { TestDatabase } from '../support/db';
import { idOf, type Team } from '../exceptions/support';
import { actionForm, consoleFixture, consoleLogin, consolePost } from '../review13/console-support';

/**
 * Review 14: an approver opens an exception with a write-off waiting for approval and approves it from the
 * page. Meanwhile another approver rejected that proposal and the analyst proposed a release (`pay`) instead.
 * The approve form carried only a note, so the approval went to whatever waited by then: the held money was
 * released on a signature given for a write-off the approver had read. The approve and reject forms now name
 * the proposal shown; another one waiting is refused (409, nothing written), and approved once looked at.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let deps: ExceptionDeps;
let srv: { base: string; close: () => Promise<void> };
let psp = ''; // amount_mismatch: 10.00 UAH in doubt, both a write-off and a release of it need a second person

let f: Awaited<ReturnType<typeof consoleFixture>>;

beforeAll(async () => {
  const policy = exceptionPolicyOf({ writeOff: { approvalAbove: 500n }, pay: { approvalAbove: 500n } }).policy;
  f = await consoleFixture({ policy });
  ({ db, store, team, srv } = f);
  psp = await idOf(db.sql, 'amount_mismatch');
  deps = { sql: db.sql, store, policy };
}, 120_000);

afterAll(async () => {
  await f?.close();
});

/** The approve form's fields as the exception's page wrote them. */
const approveForm = (cookie: string) => actionForm(srv.base, cookie, psp, 'approve');

const approvals = async () =>
  (await store.readStream(exceptionStream(psp))).filter((e) => isEvent(ExceptionDecisionApproved, e)).length;

describe('review14: an approval from the console signs the proposal the page showed', () => {
  it('refuses when another proposal waits by the time of the click; approves it once looked at', async () => {
    const first = await proposeDecision(deps, team.analyst, { id: psp, decision: 'write_off', note: 'lost' });
    expect(first.summary).toMatch(/needs a second person/);
    const { cookie } = await consoleLogin(srv.base, team.approver.token);
    const shown = await approveForm(cookie);

    // another approver rejects the write-off; the analyst proposes to release the held money instead
    await rejectDecision(deps, team.approver2, { id: psp, note: 'not lost: the PSP pays it' });
    const second = await proposeDecision(deps, team.analyst, { id: psp, decision: 'pay', note: 'release it' });
    expect(second.summary).toMatch(/needs a second person/);

    const r = await consolePost(srv.base, `/console/exceptions/${psp}/approve`, cookie, {
      ...shown,
      note: 'checked the write-off',
    });
    expect(await approvals()).toBe(0);
    expect((await store.readStream(discrepancyStream(psp))).length).toBe(0);
    expect(r.status).toBe(409);

    // looked at again: the release is what the page shows now, and it is what gets approved
    const again = await consolePost(srv.base, `/console/exceptions/${psp}/approve`, cookie, {
      ...(await approveForm(cookie)),
      note: 'checked the release',
    });
    expect(again.status).toBe(303);
    const [accepted] = (await store.readStream(discrepancyStream(psp))).filter((e) => isEvent(DiscrepancyAccepted, e));
    expect(dataOf(DiscrepancyAccepted, accepted!)).toMatchObject({ decision: 'pay', acceptedBy: team.approver.id });
  });
});

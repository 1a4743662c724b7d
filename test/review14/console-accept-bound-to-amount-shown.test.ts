import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { dataOf, isEvent } from '../../src/events/catalog';
import { getException } from '../../src/exceptions/queries';
import { DEFAULT_EXCEPTION_POLICY } from '../../src/exceptions/severity';
import type { EventStore } from '../../src/store/types';
import type { TestDatabase } from '../support/db';
import { appendAll, at, webhook } from '../discrepancies/fixtures';
import { idOf, project, type Team } from '../exceptions/support';
import { actionForm, consoleFixture, consoleLogin, consolePost } from '../review13/console-support';

/**
 * Review 14: an analyst opens an exception showing 10.00 UAH in doubt and writes it off (below the
 * 1,000.00 limit: in force at once). Between the page and the click the PSP's webhook is re-sent with another
 * amount, and 410.00 is in doubt. The form carried nothing of what the page showed, so the write-off was
 * taken on the amount in doubt at the moment of writing: 410.00 written off on one signature given for 10.00.
 * The accept form now carries the amount and currency shown; a decision on money that changed since is
 * refused (409, nothing written), and taken once the person has looked again.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let srv: { base: string; close: () => Promise<void> };
let psp = ''; // amount_mismatch: register 100.00, webhook 90.00

let f: Awaited<ReturnType<typeof consoleFixture>>;

beforeAll(async () => {
  f = await consoleFixture();
  ({ db, store, team, srv } = f);
  psp = await idOf(db.sql, 'amount_mismatch');
}, 120_000);

afterAll(async () => {
  await f?.close();
});

const acceptances = async () =>
  (await store.readStream(discrepancyStream(psp))).filter((e) => isEvent(DiscrepancyAccepted, e));

/** The accept form's fields as the exception's page wrote them. */
const acceptForm = (cookie: string) => actionForm(srv.base, cookie, psp, 'accept');

describe('review14: a decision from the console is taken on the amount the page showed', () => {
  it('refuses a write-off whose amount in doubt grew after the page was shown; taken after looking again', async () => {
    const before = await getException(db.sql, psp, new Date(), DEFAULT_EXCEPTION_POLICY);
    const shown = before!.amountInDoubt!;
    const { cookie } = await consoleLogin(srv.base, team.analyst.token);
    const fields = await acceptForm(cookie);
    // the PSP re-sends the webhook with another amount: more is in doubt now, still under the write-off limit
    await appendAll(store, [
      webhook({
        paymentId: 'pay-a',
        orderId: 'ord-a',
        processedAt: at('2024-03-10T10:00:00Z'),
        amount: 500_00n,
        fee: 100n,
        receivedAt: at('2024-03-12T10:00:00Z'),
      }),
    ]);
    await project(db.sql, store);
    const grown = (await getException(db.sql, psp, new Date(), DEFAULT_EXCEPTION_POLICY))!.amountInDoubt!;
    expect(BigInt(grown)).toBeGreaterThan(BigInt(shown));
    expect(BigInt(grown)).toBeLessThanOrEqual(DEFAULT_EXCEPTION_POLICY.writeOff.approvalAbove);

    const decide = { ...fields, decision: 'write_off', note: 'the PSP will not pay the difference' };
    const r = await consolePost(srv.base, `/console/exceptions/${psp}/accept`, cookie, decide);
    expect(await acceptances()).toHaveLength(0);
    expect(r.status).toBe(409);
    expect(await r.text()).toContain('amount in doubt is now');

    // looked at again: the page shows the amount now, and the write-off is taken on it
    const again = await consolePost(srv.base, `/console/exceptions/${psp}/accept`, cookie, {
      ...(await acceptForm(cookie)),
      decision: 'write_off',
      note: 'the PSP will not pay the difference',
    });
    expect(again.status).toBe(303);
    const [accepted] = await acceptances();
    expect(dataOf(DiscrepancyAccepted, accepted!)).toMatchObject({ amount: grown, acceptedBy: team.analyst.id });
  });
});

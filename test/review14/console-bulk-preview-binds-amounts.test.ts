import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscrepancyAccepted, discrepancyStream } from '../../src/events/audit-events';
import { dataOf, isEvent } from '../../src/events/catalog';
import { getException } from '../../src/exceptions/queries';
import { DEFAULT_EXCEPTION_POLICY } from '../../src/exceptions/severity';
import type { EventStore } from '../../src/store/types';
import type { TestDatabase } from '../support/db';
import { appendAll, at, webhook } from '../discrepancies/fixtures';
import { idOf, project, type Team } from '../exceptions/support';
import { confirmFields, consoleFixture, consoleLogin, consolePost } from '../review13/console-support';

/**
 * Review 14: a bulk write-off from the console is previewed, then applied "exactly as previewed" (its digest).
 * The digest covered each exception's id and the words "accept: write_off", not the money: a webhook re-sent
 * between the preview and the click put 410.00 in doubt where 10.00 had been, the digest still matched, and the
 * apply wrote off 410.00 on one person's word. The preview now lists each decision's money in doubt and the
 * digest binds it: the apply is refused (409, nothing written) and the preview, done again, shows the new sum.
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

describe('review14: a bulk write-off applies the money the preview listed', () => {
  it('refuses the apply when an amount in doubt grew since the preview; the new preview applies', async () => {
    const { cookie, csrf } = await consoleLogin(srv.base, team.analyst.token);
    const form = {
      _csrf: csrf,
      type: 'amount_mismatch',
      bulk_action: 'accept',
      decision: 'write_off',
      reason: 'the PSP will not pay the differences',
    };
    const preview = await (await consolePost(srv.base, '/console/exceptions/bulk', cookie, form)).text();
    expect(preview).toContain(psp);
    const fields = confirmFields(preview);
    expect(fields.confirm).toBe('1');

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
    expect(BigInt(grown)).toBeLessThanOrEqual(DEFAULT_EXCEPTION_POLICY.writeOff.approvalAbove);

    const r = await consolePost(srv.base, '/console/exceptions/bulk', cookie, fields);
    expect(await acceptances()).toHaveLength(0);
    expect(r.status).toBe(409);

    const again = await (await consolePost(srv.base, '/console/exceptions/bulk', cookie, form)).text();
    const applied = await consolePost(srv.base, '/console/exceptions/bulk', cookie, confirmFields(again));
    expect(applied.status).toBe(200);
    const [accepted] = await acceptances();
    expect(dataOf(DiscrepancyAccepted, accepted!)).toMatchObject({ decision: 'write_off', amount: grown });
  });
});

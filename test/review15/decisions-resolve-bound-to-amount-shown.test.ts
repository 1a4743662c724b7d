import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEvent } from '../../src/events/catalog';
import { ExceptionResolvedByHand, exceptionStream } from '../../src/events/exception-events';
import { resolveExceptionByHand } from '../../src/exceptions/actions';
import { getException } from '../../src/exceptions/queries';
import { DEFAULT_EXCEPTION_POLICY } from '../../src/exceptions/severity';
import type { EventStore } from '../../src/store/types';
import type { TestDatabase } from '../support/db';
import { appendAll } from '../discrepancies/fixtures';
import { idOf, project, type Team } from '../exceptions/support';
import { order } from '../orders/support';
import { actionForm, consoleFixture, consoleLogin, consolePost } from '../review13/console-support';

/**
 * Review 15: a hand resolution takes an exception out of the team's work on what its person read. An analyst
 * opens an order the PSP never saw, 10.00 UAH in doubt, and resolves it by hand ("timing"); between the page and
 * the click the order is amended to 900.00. The resolve form carried nothing of what the page showed, so
 * the 900.00 was resolved on a look at 10.00, its evidence the amendment (so not even shown as reopened).
 * The form now carries the amount and currency shown, as the accept form does; changed since, it is refused
 * (409, nothing written). The API and the CLI take them too (`amount_in_doubt`/`currency`,
 * `--amount-in-doubt`/`--currency`).
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let srv: { base: string; close: () => Promise<void> };
let unpaid = ''; // order_not_at_psp: ord-unpaid, 10.00 UAH

let f: Awaited<ReturnType<typeof consoleFixture>>;

beforeAll(async () => {
  f = await consoleFixture();
  ({ db, store, team, srv } = f);
  unpaid = await idOf(db.sql, 'order_not_at_psp');
}, 120_000);

afterAll(async () => {
  await f?.close();
});

const resolutions = async () =>
  (await store.readStream(exceptionStream(unpaid))).filter((e) => isEvent(ExceptionResolvedByHand, e));
const inDoubt = async () => (await getException(db.sql, unpaid, new Date(), DEFAULT_EXCEPTION_POLICY))!.amountInDoubt;
const RESOLVE = { reasonCode: 'timing', note: 'the customer pays tomorrow' };

describe('review15: a hand resolution is taken on the amount its person was shown', () => {
  it('refuses a resolution whose amount in doubt changed after the page was shown; taken after looking again', async () => {
    const shown = await inDoubt();
    expect(shown).toBe('1000');
    const { cookie } = await consoleLogin(srv.base, team.analyst.token);
    const fields = await actionForm(srv.base, cookie, unpaid, 'resolve');
    // the order is amended: another amount
    await appendAll(store, [
      order({
        order_id: 'ord-unpaid',
        amount: '900.00',
        currency: 'UAH',
        created_at: '2024-03-10T08:00:00Z',
        amended_at: '2024-03-11T08:00:00Z',
        split: '',
      }),
    ]);
    await project(db.sql, store);
    const now = await inDoubt();
    expect(now).toBe('90000');

    const r = await consolePost(srv.base, `/console/exceptions/${unpaid}/resolve`, cookie, { ...fields, ...RESOLVE });
    expect(await resolutions()).toHaveLength(0);
    expect(r.status).toBe(409);
    expect(await r.text()).toContain('the amount in doubt is now 900.00 UAH');

    // the API and the library: the same binding
    await expect(
      resolveExceptionByHand({ sql: db.sql, store }, team.analyst, {
        id: unpaid,
        ...RESOLVE,
        seen: { amountInDoubt: shown, currency: 'UAH' },
      }),
    ).rejects.toThrow(/the decision was taken on 10\.00 UAH, the amount in doubt is now 900\.00 UAH/);
    expect(await resolutions()).toHaveLength(0);

    // looked at again: the page shows the amount now, and the resolution is taken on it
    const again = await consolePost(srv.base, `/console/exceptions/${unpaid}/resolve`, cookie, {
      ...(await actionForm(srv.base, cookie, unpaid, 'resolve')),
      ...RESOLVE,
    });
    expect(again.status).toBe(303);
    expect(await resolutions()).toHaveLength(1);
  });
});

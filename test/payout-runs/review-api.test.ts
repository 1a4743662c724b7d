import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYOUT_RUNS_STREAM } from '../../src/events/payout-run-events';
import { createPayoutRunsApi } from '../../src/http/payout-runs-api';
import { draftRun } from '../../src/payout-runs/actions';
import { directoryReader } from '../../src/people/authenticate';
import { addUser } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register, NONE_PAID, weekdayAhead } from './fixtures';

/**
 * A hostile review of the HTTP door: two approvers approving one run at the same moment (both read the draft
 * before either appends). One wins; the other is told the run changed meanwhile (409), not an internal error.
 */

let db: TestDatabase;
let plain: EventStore;
let server: Server;
let base = '';
const tokens: Record<string, string> = {};

/** The store, where the first two reads of the runs wait for each other: both approvals read the same draft. */
function racing(store: EventStore): EventStore {
  let waiting = 0;
  let release: () => void = () => {};
  const both = new Promise<void>((r) => {
    release = r;
  });
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'readStream') return typeof v === 'function' ? v.bind(target) : v;
      return async (stream: string, ...rest: unknown[]) => {
        const events = await (v as (...a: unknown[]) => Promise<unknown>).call(target, stream, ...rest);
        if (stream === PAYOUT_RUNS_STREAM && waiting < 2) {
          waiting += 1;
          if (waiting === 2) release();
          await both;
        }
        return events;
      };
    },
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  const store = createPostgresEventStore(db.sql);
  plain = store;
  tokens.admin = (await addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'admin' })).token;
  for (const id of ['petro', 'iryna', 'maria'])
    tokens[id] = (await addUser(store, tokens.admin, { id, name: id, role: 'approver' })).token;
  await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606' });
  await issue(store, '2026-10', [
    {
      subMerchantId: 'SM-A',
      currency: 'EUR',
      reference: 'RS-SM-A-2026-10-EUR',
      amountDue: '4200',
      held: '0',
      payable: '4200',
      holds: [],
    },
  ]);
  await draftRun(store, person('petro', 'approver'), { month: '2026-10', bank: BANK, env: ENV, paidByBank: NONE_PAID });
  const api = createPayoutRunsApi({
    store: racing(store),
    directory: directoryReader(store, 0),
    timezone: 'Europe/Kyiv',
  });
  // as asyncRoute (src/http/routes.ts) answers what a handler throws
  server = createServer((req, res) => {
    api(req, res).catch(() => res.writeHead(500).end('{"error":"internal_error"}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await db.drop();
});

describe('review: two approvals over HTTP at the same moment', () => {
  it('one is approved (200), the other refused as a conflict (409), naming what to do', async () => {
    const approve = (who: string) =>
      fetch(`${base}/api/payout-runs/PR-2026-10-1/approve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens[who]}` },
        body: JSON.stringify({ executionDate: weekdayAhead(5) }),
      });
    const answers = await Promise.all(['iryna', 'maria'].map(approve));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const lost = answers.find((a) => a.status === 409)!;
    expect(await lost.json()).toMatchObject({
      error: 'changed_meanwhile',
      message: expect.stringContaining('read the run again'),
    });
  });
});

describe('review: two drafts of one month at the same moment', () => {
  it('one run is drafted; the other is refused as CHANGED_MEANWHILE, nothing of it written', async () => {
    await issue(plain, '2026-11', [
      {
        subMerchantId: 'SM-A',
        currency: 'EUR',
        reference: 'RS-SM-A-2026-11-EUR',
        amountDue: '100',
        held: '0',
        payable: '100',
        holds: [],
      },
    ]);
    const store = racing(plain);
    const both = await Promise.allSettled(
      ['ana', 'iryna'].map((id) =>
        draftRun(store, person(id, id === 'ana' ? 'analyst' : 'approver'), {
          month: '2026-11',
          bank: BANK,
          env: ENV,
          paidByBank: NONE_PAID,
        }),
      ),
    );
    expect(both.map((b) => b.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = both.find((b) => b.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toMatchObject({ code: 'CHANGED_MEANWHILE' });
    const runs = (await plain.readStream(PAYOUT_RUNS_STREAM)).filter((e) => e.type === 'PayoutRunDrafted');
    expect(runs).toHaveLength(2); // October's, and one of November's
  });
});

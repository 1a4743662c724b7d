import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES } from '../../src/events/people-events';
import { type ActionName, ACTION_REQUESTS } from '../../src/exceptions/actions';
import { exceptionPolicyOf } from '../../src/exceptions/policy';
import { createExceptionsApi } from '../../src/http/exceptions-api';
import { directoryReader } from '../../src/people/authenticate';
import { type Action, may } from '../../src/people/roles';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { addTeam, idOf, project, seedTwoLegs, type Team } from './support';

/**
 * The exceptions over HTTP: every action × every role against the matrix of src/people/roles.ts (403 naming
 * the action where the role may not, never 403 where it may), reads for every role, 400 naming the field,
 * 401 without a token, and maker-checker refused over the wire.
 */

let db: TestDatabase;
let store: EventStore;
let team: Team;
let server: Server;
let base: string;
let psp: string;
let unpaid: string;
let orphan: string;
const AUDITOR = 'auditor-token-for-tests-0123456789';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await seedTwoLegs(store);
  team = await addTeam(store);
  await project(db.sql, store);
  psp = await idOf(db.sql, 'amount_mismatch');
  unpaid = await idOf(db.sql, 'order_not_at_psp');
  orphan = await idOf(db.sql, 'payment_without_order');
  const api = createExceptionsApi({
    sql: db.sql,
    store,
    directory: directoryReader(store, 0),
    policy: exceptionPolicyOf({ writeOff: { approvalAbove: 5000n } }).policy,
    auditorToken: AUDITOR,
  });
  server = createServer((req, res) => {
    void api(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/exceptions`;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await store?.close();
  await db?.drop();
});

const post = (token: string, path: string, body: unknown) =>
  fetch(`${base}/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const get = (token: string, path = '') => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });

/** What each action of the API needs (reopen of one that is not accepted: the resolver's). */
const NEEDS: Record<ActionName, Action> = {
  assign: 'exception.assign',
  comment: 'exception.comment',
  resolve: 'exception.resolve',
  accept: 'exception.propose',
  approve: 'exception.approve',
  reject: 'exception.approve',
  reopen: 'exception.resolve',
};

/** A body that is valid for the action, so that what answers is the role check, then the state's. */
const BODY: Record<ActionName, Record<string, string>> = {
  assign: { assignee: 'ivan', note: 'matrix' },
  comment: { text: 'matrix' },
  resolve: { reason_code: 'other', note: 'matrix' },
  accept: { decision: 'withhold', note: 'matrix' },
  approve: { note: 'matrix' },
  reject: { note: 'matrix' },
  reopen: { reason: 'matrix' },
};

describe('the exceptions API', () => {
  it('answers every action of every role as the role matrix says', async () => {
    const people = { viewer: team.viewer, analyst: team.analyst, approver: team.approver, admin: team.admin };
    const seen: string[] = [];
    for (const role of ROLES) {
      for (const action of ACTION_REQUESTS) {
        // the role is checked before the state: an action the state refuses after the first success (409)
        // still shows whether the role passed; the PSP exception is kept open for the maker-checker case
        const target = action === 'accept' ? orphan : action === 'resolve' ? psp : unpaid;
        const r = await post(people[role].token, `${target}/${action}`, BODY[action]);
        const body = (await r.json()) as { message?: string };
        if (may(role, NEEDS[action])) expect(r.status, `${role} ${action}: ${body.message}`).not.toBe(403);
        else {
          expect(r.status, `${role} ${action}`).toBe(403);
          expect(body.message).toContain(`${NEEDS[action]} is not theirs`);
        }
        seen.push(`${role} ${action} ${r.status === 403 ? 'deny' : 'allow'}`);
      }
      expect((await get(people[role].token)).status, `${role} reads`).toBe(200);
    }
    expect(seen).toHaveLength(ROLES.length * ACTION_REQUESTS.length);
  });

  it('reads a list, one exception and its history; 401 without a token; the auditor token reads only', async () => {
    await project(db.sql, store);
    const list = (await (await get(team.viewer.token, '?leg=orders&limit=10')).json()) as {
      items: Array<{ id: string; leg: string }>;
    };
    expect(list.items.map((x) => x.leg)).toEqual(list.items.map(() => 'orders'));
    expect(list.items.map((x) => x.id)).toContain(unpaid);
    const one = (await (await get(team.viewer.token, `/${unpaid}`)).json()) as { state: string; type: string };
    expect(one).toMatchObject({ type: 'order_not_at_psp' });
    const history = (await (await get(AUDITOR, `/${unpaid}/history`)).json()) as {
      history: Array<{ by: string; action: string }>;
    };
    expect(history.history.length).toBeGreaterThan(0);
    expect((await fetch(base)).status).toBe(401);
    const auditorWrites = await post(AUDITOR, `${unpaid}/comment`, { text: 'x' });
    expect(auditorWrites.status).toBe(403);
    expect((await get(team.viewer.token, '/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('refuses a missing or wrong field with 400 naming it', async () => {
    const noText = await post(team.analyst.token, `${unpaid}/comment`, {});
    expect(noText.status).toBe(400);
    expect(await noText.json()).toMatchObject({ error: 'invalid', field: 'text', message: 'text: required' });
    const badDecision = await post(team.analyst.token, `${psp}/accept`, { decision: 'burn', note: 'x' });
    expect(await badDecision.json()).toMatchObject({ field: 'decision' });
    expect((await get(team.viewer.token, '?state=done')).status).toBe(400);
    const notJson = await fetch(`${base}/${unpaid}/comment`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.analyst.token}` },
      body: '{',
    });
    expect(await notJson.json()).toMatchObject({ field: 'body' });
  });

  it('refuses the proposer approving their own write-off (403), then a second approver approves', async () => {
    const proposed = await post(team.approver.token, `${psp}/accept`, { decision: 'write_off', note: 'lost' });
    expect(proposed.status, JSON.stringify(await proposed.clone().json())).toBe(200);
    await project(db.sql, store);
    const own = await post(team.approver.token, `${psp}/approve`, { note: 'mine' });
    expect(own.status).toBe(403);
    expect(((await own.json()) as { message: string }).message).toMatch(/^maker-checker: anna proposed this write_off/);
    const second = await post(team.approver2.token, `${psp}/approve`, { note: 'agreed' });
    expect(second.status).toBe(200);
    await project(db.sql, store);
    expect(await (await get(team.viewer.token, `/${psp}`)).json()).toMatchObject({
      state: 'accepted',
      decision: 'write_off',
    });
  });
});

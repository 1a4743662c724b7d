import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPayoutRunsApi } from '../../src/http/payout-runs-api';
import { draftRun } from '../../src/payout-runs/actions';
import { directoryReader } from '../../src/people/authenticate';
import { addUser } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { sha256Hex } from '../../src/canonical';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { BANK, ENV, issue, person, register, NONE_PAID, weekdayAhead } from './fixtures';
import { wasmErrors } from './validate';

/** GET /api/payout-runs, one run, POST …/approve, GET …/file over real HTTP: roles enforced on the server. */

let db: TestDatabase;
let store: EventStore;
let server: Server;
let base = '';
const tokens: Record<string, string> = {};
const AUDITOR = 'auditor-secret-token-0123456789';

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  tokens.admin = (await addUser(store, undefined, { id: 'olena', name: 'Olena', role: 'admin' })).token;
  for (const [id, role] of [
    ['ana', 'analyst'],
    ['petro', 'approver'],
    ['iryna', 'approver'],
    ['vera', 'viewer'],
  ] as const)
    tokens[id] = (await addUser(store, tokens.admin, { id, name: id, role })).token;
  await register(store, 'SM-A', { payoutAccount: 'FR1420041010050500013M02606', legalName: 'A SARL' });
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
    store,
    directory: directoryReader(store, 0),
    auditorToken: AUDITOR,
    timezone: 'Europe/Kyiv',
  });
  server = createServer((req, res) => {
    void api(req, res).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await db.drop();
});

const call = (path: string, who?: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { ...(who ? { authorization: `Bearer ${tokens[who] ?? who}` } : {}), ...(init.headers ?? {}) },
  });
const post = (path: string, who: string, body?: unknown) =>
  call(path, who, { method: 'POST', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

describe('payout runs over HTTP', () => {
  it('refuses without a known token (401), and lists for any reader, the auditor token too', async () => {
    expect((await call('/api/payout-runs')).status).toBe(401);
    expect((await call('/api/payout-runs', 'recon_wrong')).status).toBe(401);
    for (const who of ['vera', AUDITOR]) {
      const r = await call('/api/payout-runs', who);
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject([
        { id: 'PR-2026-10-1', status: 'draft', draftedBy: 'petro', totals: [{ currency: 'EUR', amount: '4200' }] },
      ]);
    }
    expect(await (await call('/api/payout-runs/PR-2026-10-1', 'ana')).json()).toMatchObject({ id: 'PR-2026-10-1' });
    expect((await call('/api/payout-runs/PR-2026-10-9', 'ana')).status).toBe(404);
    expect((await call('/api/payout-runs/%E0%A4%A', 'ana')).status).toBe(400);
    expect((await call('/api/payout-runs/not-a-run', 'ana')).status).toBe(400);
  });

  it('approval: roles on the server, maker-checker, a body checked; the file then, for analysts and approvers', async () => {
    const path = '/api/payout-runs/PR-2026-10-1';
    expect((await call(`${path}/approve`, 'iryna')).status).toBe(405);
    expect((await post(`${path}/approve`, 'vera')).status).toBe(403);
    expect((await post(`${path}/approve`, 'ana')).status).toBe(403);
    expect((await post(`${path}/approve`, 'admin')).status).toBe(403);
    const own = await post(`${path}/approve`, 'petro');
    expect(own.status).toBe(409);
    expect(await own.json()).toMatchObject({ error: 'maker_checker' });
    expect((await call(`${path}/file`, 'ana')).status).toBe(409);
    expect((await post(`${path}/approve`, 'iryna', { executionDate: 'tomorrow' })).status).toBe(400);
    expect((await post(`${path}/approve`, 'iryna', { other: 1 })).status).toBe(400);
    const friday = weekdayAhead(5);
    const ok = await post(`${path}/approve`, 'iryna', { executionDate: friday });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'approved', approvedBy: 'iryna', executionDate: friday });
    expect((await post(`${path}/approve`, 'iryna')).status).toBe(409);

    expect((await call(`${path}/file`, 'vera')).status).toBe(403);
    const file = await call(`${path}/file`, 'ana');
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(file.headers.get('content-disposition')).toContain('PR-2026-10-1.pain.001.001.09.xml');
    const xml = await file.text();
    expect(file.headers.get('x-content-sha256')).toBe(sha256Hex(xml));
    expect(await wasmErrors(xml)).toEqual([]);
    expect(xml).toContain('<InstdAmt Ccy="EUR">42.00</InstdAmt>');
    expect(xml).toContain(`<ReqdExctnDt><Dt>${friday}</Dt></ReqdExctnDt>`);
  });
});

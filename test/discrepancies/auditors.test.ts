import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createAuditorApi } from '../../src/http/auditor-api';
import { csvCell, discrepanciesCsv, listDiscrepancies } from '../../src/reconciliation/discrepancy-queries';
import { liveSchema } from '../support/live-schema';
import { appendAll, at, periodRow, project, registerRows, subMerchant, syncCompleted, webhook } from './fixtures';

const ROOT = path.resolve(import.meta.dirname, '../..');
// a formula-looking order id must come out of the CSV defused
const EVIL = '=HYPERLINK("http://evil")';
const TOKEN = 'auditor-token-for-tests-0123456789';

let db: TestDatabase;
let store: EventStore;
let server: Server;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const t = at('2024-05-10T08:00:00Z');
  await appendAll(store, [
    subMerchant('sm-alpha', 'Alpha Shop'),
    registerRows({
      paymentId: 'pay-a',
      orderId: EVIL,
      dateTime: t,
      amount: 100_00n,
      receivers: [{ name: 'Alpha Shop', amount: 99_00n, fee: 100n }],
      reportId: 'r1',
      observedAt: at('2024-05-10T20:00:00Z'),
    }),
    periodRow({
      paymentId: 'pay-a',
      orderId: EVIL,
      dateTime: t,
      amount: 100_00n,
      merchantFee: 100n,
      reportId: 'r1',
      observedAt: at('2024-05-10T20:00:00Z'),
    }),
    webhook({ paymentId: 'pay-a', orderId: EVIL, processedAt: t, amount: 90_00n, fee: 100n, receivedAt: t }),
    syncCompleted({
      from: at('2024-05-10T00:00:00Z'),
      to: at('2024-05-11T00:00:00Z'),
      completedAt: at('2024-05-13T00:00:00Z'),
      reportId: 'r2',
    }),
  ]);
  await project(db.sql, store);
  const api = createAuditorApi({ sql: db.sql, token: TOKEN });
  server = createServer((req, res) => {
    void api(req, res).then((handled) => {
      if (!handled) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not mine');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await db?.drop();
});

describe('auditor HTTP API', () => {
  const auth = { authorization: `Bearer ${TOKEN}` };

  it('refuses requests without or with a wrong token (401), and writes (403)', async () => {
    const none = await fetch(`${base}/api/discrepancies`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'unauthorized' });
    expect((await fetch(`${base}/api/discrepancies`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(
      401,
    );
    expect((await fetch(`${base}/api/discrepancies`, { headers: { authorization: TOKEN } })).status).toBe(401);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await fetch(`${base}/api/discrepancies`, { method, headers: auth });
      expect(r.status).toBe(403);
      expect(await r.json()).toMatchObject({ error: 'read_only' });
    }
    // paths that are not the API's are left to the server
    const other = await fetch(`${base}/webhooks/x`, { headers: auth });
    expect(await other.text()).toBe('not mine');
  });

  it('serves discrepancies with the CLI filters, and the operations of a payment', async () => {
    const r = await fetch(`${base}/api/discrepancies?type=amount_mismatch&from=2024-05-10&to=2024-05-10`, {
      headers: auth,
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as Array<Record<string, unknown>>;
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({
      type: 'amount_mismatch',
      status: 'open',
      payment_id: 'pay-a',
      method: 'purchase',
      sub_merchant_id: 'sm-alpha',
      currency: 'UAH',
    });
    expect(await (await fetch(`${base}/api/discrepancies?from=2024-05-11`, { headers: auth })).json()).toEqual([]);
    expect(await (await fetch(`${base}/api/discrepancies?sub_merchant=sm-other`, { headers: auth })).json()).toEqual(
      [],
    );
    const bad = await fetch(`${base}/api/discrepancies?type=nonsense`, { headers: auth });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_filter' });
    const op = await fetch(`${base}/api/operations/pay-a`, { headers: auth });
    expect(op.status).toBe(200);
    const ops = (await op.json()) as {
      operations: Array<Record<string, unknown>>;
      receivers: unknown[];
      discrepancies: unknown[];
    };
    expect(ops.operations[0]).toMatchObject({ payment_id: 'pay-a', register_amount: '10000', webhook_amount: '9000' });
    expect(ops.receivers).toHaveLength(1);
    expect(ops.discrepancies).toHaveLength(1);
    expect((await fetch(`${base}/api/operations/nope`, { headers: auth })).status).toBe(404);
  });
});

describe('recon_auditor role', () => {
  it('reads the documented views and nothing else, and cannot write', async () => {
    const schema = await liveSchema(db.sql, 'reconciliation');
    expect(schema).toBeDefined();
    await db.sql
      .begin(async (tx) => {
        await tx`set local role recon_auditor`;
        const [n] = await tx<{ n: number }[]>`select count(*)::int as n from recon.discrepancies`;
        expect(n!.n).toBe(1);
        for (const v of ['operations', 'operation_receivers', 'sync_windows'])
          await tx.unsafe(`select * from recon.${v} limit 1`);
        const denied = async (statement: string) => {
          const e = await tx.savepoint((sp) => sp.unsafe(statement)).catch((err: unknown) => err);
          expect((e as { code?: string }).code, statement).toBe('42501');
        };
        await denied('select * from es_events limit 1');
        await denied('select * from projection_builds limit 1');
        await denied(`select * from "${schema}".discrepancies limit 1`);
        await denied(`select * from "${schema}".observations limit 1`);
        await denied(`update recon.discrepancies set status = 'accepted'`);
        await denied(`delete from recon.operations`);
        await denied(
          `insert into es_events (event_id, stream_id, stream_revision, type, version, data, content_hash) values (gen_random_uuid(), 's', 0, 't', 1, '{}', 'x')`,
        );
        await denied('create table recon.mine (x int)');
        await denied(`select * from es_append_any('')`);
        // nor take the advisory locks recon serialises its work on: held for a session, one would stall
        // every catch-up (migration 0900)
        await denied(`select pg_advisory_lock(7315, hashtext('reconciliation'))`);
        await denied('select pg_try_advisory_lock(7315220100)');
        await denied('select pg_advisory_xact_lock_shared(1)');
        throw new Error('rollback');
      })
      .catch((e: Error) => {
        if (e.message !== 'rollback') throw e;
      });
    const [r] = await db.sql<
      { rolcanlogin: boolean }[]
    >`select rolcanlogin from pg_roles where rolname = 'recon_auditor'`;
    expect(r!.rolcanlogin).toBe(false);
    // the store's append function is not callable by the auditor (nor by PUBLIC)
    const [f] = await db.sql<
      { auditor: boolean }[]
    >`select has_function_privilege('recon_auditor', 'es_append_any(text)', 'execute') as auditor`;
    expect(f!.auditor).toBe(false);
    const locks = await db.sql<{ fn: string; auditor: boolean; recon: boolean }[]>`
      select p.oid::regprocedure::text as fn, has_function_privilege('recon_auditor', p.oid, 'execute') as auditor,
             has_function_privilege(current_user, p.oid, 'execute') as recon
      from pg_proc p where p.pronamespace = 'pg_catalog'::regnamespace and p.proname like 'pg\\_%advisory\\_%lock%' and p.proname not like '%unlock%'`;
    expect(locks.length).toBe(16);
    expect(locks.filter((l) => l.auditor || !l.recon)).toEqual([]);
  });
});

describe('recon discrepancies (CLI)', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, 'bin/recon.mjs'), ...args], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_URL: db.url,
        RECON_LOG_LEVEL: 'error',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('prints JSON with the documented fields', () => {
    // its payments have no orders: the orders read model, caught up too, lists them as payment_without_order
    const r = run(['discrepancies', '--format', 'json', '--status', 'open', '--type', 'amount_mismatch']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(1);
    for (const k of [
      'id',
      'type',
      'status',
      'pos_id',
      'order_id',
      'payment_id',
      'method',
      'sub_merchant_id',
      'currency',
      'values',
      'evidence',
      'detected_at',
    ]) {
      expect(rows[0]).toHaveProperty(k);
    }
    expect(rows[0]!.values).toMatchObject({ webhook: { amount: '9000' }, register: { amount: '10000' } });
    expect((rows[0]!.evidence as string[]).length).toBe(3);
  });

  it('refuses a bad filter and an empty note', () => {
    const bad = run(['discrepancies', '--type', 'nope']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/type: expected one of/);
    const empty = run(['discrepancies', 'accept', '00000000-0000-5000-8000-000000000000', '--note', ' ']);
    expect(empty.status).toBe(2);
    expect(empty.stderr).toMatch(/--note must not be empty/);
  });

  it('explain lists the events of every source in order and the resulting state', () => {
    const r = run(['explain', 'pay-a', '--no-catch-up']);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    const types = lines.filter((l) => /^\s+\d+\/\d+ /.test(l)).map((l) => l.trim().split(/\s+/)[2]);
    expect(types).toEqual(['RegisterRecordObserved', 'PeriodRecordObserved', 'WebhookReceived', 'SyncWindowCompleted']);
    expect(r.stdout).toMatch(/amount_mismatch open/);
  });
});

describe('CSV output', () => {
  it('defuses formula injection and quotes what needs it', async () => {
    expect(csvCell('=1+2')).toBe(`"'=1+2"`);
    expect(csvCell('+cmd')).toBe(`"'+cmd"`);
    expect(csvCell('@SUM(A1)')).toBe(`"'@SUM(A1)"`);
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('plain')).toBe('plain');
    const r = await listDiscrepancies(db.sql, { timezone: 'UTC' });
    if (!r.ok) throw new Error(r.message);
    const csv = discrepanciesCsv(r.value);
    expect(csv).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(csv).not.toMatch(/(^|,)=HYPERLINK/m);
  });
});

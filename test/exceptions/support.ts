import { projection as exceptions } from '../../projections/exceptions';
import { projection as orders } from '../../projections/orders';
import { projection as reconciliation } from '../../projections/reconciliation';
import type { Sql } from '../../src/db/connect';
import type { Person } from '../../src/people/directory';
import { addUser } from '../../src/people/manage';
import { silentLogger } from '../../src/log';
import type { EventStore } from '../../src/store/types';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { order } from '../orders/support';
import { catchUp } from '../support/projection-spec';

/**
 * Exceptions of two legs from the fixtures the legs' own tests use: on the PSP leg an amount_mismatch
 * (register 100.00, webhook 90.00: holds money); on the orders leg a payment_without_order (holds money) and
 * an order_not_at_psp (holds none: it may be resolved by hand).
 */

export function exceptionDeps(sql: Sql, store: EventStore) {
  return {
    sql,
    store,
    log: silentLogger,
    timezone: 'UTC',
    graceHours: 48,
    projections: [reconciliation, orders, exceptions],
  };
}

export const project = (sql: Sql, store: EventStore) => catchUp(exceptionDeps(sql, store));

export async function seedTwoLegs(store: EventStore): Promise<void> {
  const t = at('2024-03-10T10:00:00Z');
  await appendAll(store, [
    subMerchant('SM-A', 'Alpha Shop'),
    order({ order_id: 'ord-a', amount: '100.00', currency: 'UAH', created_at: '2024-03-10T08:00:00Z', split: '' }),
    order({ order_id: 'ord-unpaid', amount: '10.00', currency: 'UAH', created_at: '2024-03-10T08:00:00Z', split: '' }),
    registerRows({
      paymentId: 'pay-orphan',
      orderId: 'ord-orphan',
      dateTime: t,
      amount: 26_00n,
      receivers: [{ name: 'Alpha Shop', amount: 25_00n, fee: 1_00n }],
      reportId: 'rep-1',
      observedAt: at('2024-03-11T00:00:00Z'),
    }),
    periodRow({
      paymentId: 'pay-orphan',
      orderId: 'ord-orphan',
      dateTime: t,
      amount: 26_00n,
      merchantFee: 1_00n,
      reportId: 'rep-1',
      observedAt: at('2024-03-11T00:00:00Z'),
    }),
    webhook({
      paymentId: 'pay-orphan',
      orderId: 'ord-orphan',
      processedAt: t,
      amount: 26_00n,
      fee: 1_00n,
      receivedAt: t,
    }),
    registerRows({
      paymentId: 'pay-a',
      orderId: 'ord-a',
      dateTime: t,
      amount: 100_00n,
      receivers: [{ name: 'Alpha Shop', amount: 99_00n, fee: 100n }],
      reportId: 'rep-1',
      observedAt: at('2024-03-11T00:00:00Z'),
    }),
    periodRow({
      paymentId: 'pay-a',
      orderId: 'ord-a',
      dateTime: t,
      amount: 100_00n,
      merchantFee: 100n,
      reportId: 'rep-1',
      observedAt: at('2024-03-11T00:00:00Z'),
    }),
    webhook({ paymentId: 'pay-a', orderId: 'ord-a', processedAt: t, amount: 90_00n, fee: 100n, receivedAt: t }),
    syncCompleted({
      from: at('2024-03-10T00:00:00Z'),
      to: at('2024-03-11T00:00:00Z'),
      completedAt: at('2024-03-14T00:00:00Z'),
      reportId: 'rep-1',
      announced: 2,
    }),
  ]);
}

export interface Team {
  readonly admin: Person & { token: string };
  readonly analyst: Person & { token: string };
  readonly approver: Person & { token: string };
  readonly approver2: Person & { token: string };
  readonly viewer: Person & { token: string };
}

/** An admin (bootstrap), an analyst, two approvers and a viewer. */
export async function addTeam(store: EventStore): Promise<Team> {
  const admin = await addUser(store, undefined, { id: 'olena', name: 'Olena Koval', role: 'admin' });
  const add = async (id: string, role: string) => {
    const r = await addUser(store, admin.token, { id, name: id, role });
    return { ...r.user, token: r.token };
  };
  return {
    admin: { ...admin.user, token: admin.token },
    analyst: await add('ivan', 'analyst'),
    approver: await add('anna', 'approver'),
    approver2: await add('petro', 'approver'),
    viewer: await add('vera', 'viewer'),
  };
}

/** The open discrepancy of this type (its id). */
export async function idOf(sql: Sql, type: string): Promise<string> {
  const [r] = await sql<{ id: string }[]>`
    select id::text from (select id, type from recon.discrepancies union all select id, type from recon.order_discrepancies) d
    where type = ${type} order by id`;
  if (!r) throw new Error(`no ${type} in the fixture`);
  return r.id;
}

/** Every row of the exceptions read model, as text (replay equals live compares these). */
export async function snapshot(sql: Sql): Promise<string> {
  const work = await sql`select * from recon.exceptions order by discrepancy_id`;
  const history = await sql`
    select event_id, discrepancy_id, action, by_user, at, why, detail from recon.exception_history
    order by commit_pos, prepare_pos`;
  return JSON.stringify({ work, history });
}

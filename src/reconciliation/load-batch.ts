import type { ProjectionContext, Tx } from '../projector/projection';
import type { RecordedEvent } from '../store/types';
import { addWindow, type Batch } from './batch';
import { eventTime } from './event-clock';
import { createDueHeap } from './due-heap';
import { newLifecycle, type WaitingAcceptance } from './discrepancies/lifecycle';
import { paymentKey, paymentOf, type PaymentState, type StoredWait } from './payment-state';
import { want, type Plan } from './reconciliation-events';
import { subMerchantNames } from './sub-merchant-names';
import { discrepancyFromRow } from './discrepancies/columns';

/**
 * Loads what a batch may touch, as planned from its events: the state of only the payments it names or that
 * come due or of age during it, with one query per table keyed by arrays of payment keys; independent reads
 * are sent together (one wait for the database instead of several). `s`: the build schema, unquoted (named by
 * `tx(s)`).
 */

type Keys = ReadonlyArray<readonly [string, string]>;
/** Joins a table to these payment keys: a fragment of the query it is written in. */
const byKeys = (tx: Tx, keys: Keys) =>
  tx`join unnest(${keys.map((k) => k[0])}::text[], ${keys.map((k) => k[1])}::text[]) as k(pos_id, payment_id) using (pos_id, payment_id)`;

/** The reads that do not depend on the batch. */
function readShared(tx: Tx, s: string) {
  return Promise.all([
    tx<{ clock: Date | null }[]>`select clock from ${tx(s)}.state where id = 1`,
    tx<{ sub_merchant_id: string; name: string; event_id: string }[]>`
      select sub_merchant_id, name, event_id::text from ${tx(s)}.directory`,
    tx<{ name: string; sub_merchant_id: string; event_id: string }[]>`
      select name, sub_merchant_id, event_id::text from ${tx(s)}.former_names`,
    tx<{ discrepancy_id: string; accepted_by: string; note: string; accepted_at: Date; event_id: string }[]>`
      select discrepancy_id::text, accepted_by, note, accepted_at, event_id::text from ${tx(s)}.pending_acceptances`,
    tx<
      { pos_id: string; window_from: Date; window_to: Date; completed_at: Date; report_id: string; event_id: string }[]
    >`select pos_id, window_from, window_to, completed_at, report_id, event_id::text from ${tx(s)}.sync_windows order by completed_at, event_id`,
  ]);
}

type PaymentRef = { pos_id: string; payment_id: string };

/**
 * Payments the batch may touch beyond those its events name: due by the batch's latest clock, with an
 * operation in a window it completes or waiting for its report, with a receiver it renames, or holding a
 * discrepancy it accepts.
 */
export async function wantMore(tx: Tx, s: string, plan: Plan, maxClock: number | null): Promise<void> {
  const add = (rows: readonly { pos_id: string; payment_id: string | null }[]) => {
    for (const r of rows) if (r.payment_id !== null) want(plan, r.pos_id, r.payment_id);
  };
  if (maxClock !== null)
    add(await tx<PaymentRef[]>`select pos_id, payment_id from ${tx(s)}.due where due_at <= ${new Date(maxClock)}`);
  for (const w of plan.windows) {
    add(
      await tx<PaymentRef[]>`select distinct pos_id, payment_id from ${tx(s)}.operations
         where pos_id = ${w.posId} and occurred_at >= ${w.from} and occurred_at < ${w.to} and not (register_present and period_present)`,
    );
    // operations waiting for this report (or for any window covering their rows): judged when it completes
    add(
      await tx<PaymentRef[]>`select distinct pos_id, payment_id from ${tx(s)}.report_pending
         where pos_id = ${w.posId} and (report_id = ${w.reportId} or (date_time >= ${w.from} and date_time < ${w.to}))`,
    );
  }
  if (plan.receiverNames.size)
    add(
      await tx<PaymentRef[]>`
        select distinct pos_id, payment_id from ${tx(s)}.operation_receivers where receiver_name = any(${[...plan.receiverNames]}::text[])`,
    );
  if (plan.acceptedIds.length)
    add(
      await tx<{ pos_id: string; payment_id: string | null }[]>`
        select pos_id, payment_id from ${tx(s)}.discrepancies where id = any(${plan.acceptedIds}::uuid[])`,
    );
}

/** The stored state of these payments, into the batch (in the order of `keys`). */
async function loadPayments(tx: Tx, s: string, b: Batch, keys: Keys): Promise<void> {
  if (keys.length === 0) return;
  const [dueRows, obsRows, resendRows, waitRows, discRows] = await Promise.all([
    // every due row of these payments (not only the ripe ones): a changed due replaces it
    tx<{ pos_id: string; payment_id: string; due_at: Date }[]>`
      select pos_id, payment_id, due_at from ${tx(s)}.due ${byKeys(tx, keys)}`,
    tx<{ pos_id: string; payment_id: string; obs: string }[]>`
      select pos_id, payment_id, obs from ${tx(s)}.observations ${byKeys(tx, keys)}`,
    tx<{ pos_id: string; payment_id: string; method: string; requested_at: Date; event_id: string }[]>`
      select pos_id, payment_id, method, requested_at, event_id::text from ${tx(s)}.resends ${byKeys(tx, keys)} order by requested_at, event_id`,
    tx<
      { pos_id: string; payment_id: string; operation_key: string; report_id: string; date_time: Date | null }[]
    >`select pos_id, payment_id, operation_key, report_id, date_time from ${tx(s)}.report_pending ${byKeys(tx, keys)}`,
    tx<Record<string, unknown>[]>`select d.* from ${tx(s)}.discrepancies d ${byKeys(tx, keys)}`,
  ]);
  const due = new Map(dueRows.map((r) => [paymentKey(r.pos_id, r.payment_id), r.due_at.getTime()]));
  const obs = new Map(obsRows.map((r) => [paymentKey(r.pos_id, r.payment_id), r.obs]));
  const waits = new Map<string, StoredWait[]>();
  for (const r of waitRows) {
    const k = paymentKey(r.pos_id, r.payment_id);
    const w = { operationKey: r.operation_key, reportId: r.report_id, dateTime: r.date_time?.toISOString() ?? null };
    const list = waits.get(k);
    if (list) list.push(w);
    else waits.set(k, [w]);
  }
  for (const [posId, paymentId] of keys) {
    const k = paymentKey(posId, paymentId);
    const p = paymentOf(posId, paymentId, {
      observations: obs.get(k) ?? null,
      due: due.get(k) ?? null,
      waits: waits.get(k) ?? [],
    });
    if (p.due !== null) b.due.push(p.due, p);
    b.payments.set(k, p);
  }
  const payment = (posId: string, paymentId: string): PaymentState => b.payments.get(paymentKey(posId, paymentId))!;
  for (const r of resendRows) {
    payment(r.pos_id, r.payment_id).resends.push({
      posId: r.pos_id,
      paymentId: r.payment_id,
      method: r.method,
      requestedAt: r.requested_at.toISOString(),
      eventId: r.event_id,
    });
  }
  for (const r of discRows) {
    const d = discrepancyFromRow(r);
    b.storedDiscrepancies.add(d.id);
    payment(d.pos_id!, d.payment_id!).discrepancies.set(d.id, d);
  }
}

/**
 * The batch's state, loaded: everything the events of `plan` may read or change. `more: false` loads the
 * payments `plan` names and no others (window-chunks.ts names each chunk's payments itself).
 */
export async function loadBatch(
  tx: Tx,
  ctx: ProjectionContext,
  events: readonly RecordedEvent[],
  plan: Plan,
  { more = true }: { more?: boolean } = {},
): Promise<Batch> {
  const s = ctx.schema;
  const [[st], directoryRows, formerRows, waitingRows, windowRows] = await readShared(tx, s);
  const clock = st?.clock ? st.clock.getTime() : null;
  let maxClock = clock;
  for (const e of events) {
    const t = eventTime(e);
    if (t !== null && (maxClock === null || t > maxClock)) maxClock = t;
  }
  const directory = new Map(directoryRows.map((r) => [r.sub_merchant_id, { name: r.name, eventId: r.event_id }]));
  // a renamed sub-merchant: its rows under the old name are judged again (former_names)
  for (const id of plan.registeredIds) {
    const old = directory.get(id);
    if (old) plan.receiverNames.add(old.name);
  }
  if (more) await wantMore(tx, s, plan, maxClock);

  const waiting = new Map<string, WaitingAcceptance>();
  for (const r of waitingRows) {
    waiting.set(r.discrepancy_id, {
      discrepancyId: r.discrepancy_id,
      acceptedBy: r.accepted_by,
      note: r.note,
      acceptedAt: r.accepted_at.toISOString(),
      eventId: r.event_id,
      stored: true,
    });
  }
  const b: Batch = {
    graceMs: ctx.graceHours * 3_600_000,
    clock,
    payments: new Map(),
    observed: plan.observed,
    windows: new Map(),
    completedReports: new Map(),
    names: subMerchantNames(
      directory,
      new Map(formerRows.map((r) => [r.name, { id: r.sub_merchant_id, eventId: r.event_id }])),
    ),
    reportLevel: new Map(),
    storedDiscrepancies: new Set(),
    lifecycle: newLifecycle(waiting),
    due: createDueHeap(),
    added: { observations: [], resends: [], windows: [] },
    toJudge: new Map(),
  };
  await loadPayments(tx, s, b, [...plan.wanted.values()]);
  for (const r of windowRows) {
    addWindow(b, {
      posId: r.pos_id,
      from: r.window_from.toISOString(),
      to: r.window_to.toISOString(),
      completedAt: r.completed_at.toISOString(),
      reportId: r.report_id,
      eventId: r.event_id,
    });
  }
  if (plan.reportLevel) {
    for (const r of await tx<
      Record<string, unknown>[]
    >`select * from ${tx(s)}.discrepancies where payment_id is null`) {
      const d = discrepancyFromRow(r);
      b.storedDiscrepancies.add(d.id);
      b.reportLevel.set(d.id, d);
    }
  }
  return b;
}

import { qualified } from '../db/identifier';
import { type Cell, columnsOf, copyRows, upsertRows } from '../projector/copy-rows';
import type { Tx } from '../projector/projection';
import type { Batch } from './batch';
import { sameWaits } from './judge';
import { observationToRow } from './observations';
import { operationsOf, paymentKey, type PaymentState } from './payment-state';
import { subMerchantLookup } from './sub-merchant-names';
import { writeDiscrepancies } from './discrepancies/table';
import { OPERATION_COLUMNS, operationCells, RECEIVER_COLUMNS, receiverCells } from './tables';

/** Writes back what a batch changed: appends with COPY, replaced rows deleted first. `s`: the build schema, unquoted (named by `tx(s)` or `qualified`). */

/** `definitions` as in `name type, …`: the columns of the rows. */
function insert(tx: Tx, s: string, table: string, definitions: string, rows: readonly (readonly Cell[])[]) {
  return copyRows(
    tx,
    qualified(s, table),
    columnsOf(definitions).map((c) => c.name),
    rows,
  );
}

/** Deletes the rows of these payments from one of the build's tables (nothing to do for none). */
async function deletePayments(tx: Tx, s: string, table: string, payments: readonly PaymentState[]): Promise<void> {
  if (payments.length === 0) return;
  const posIds = payments.map((p) => p.posId);
  const paymentIds = payments.map((p) => p.paymentId);
  await tx`delete from ${tx(s)}.${tx(table)} d using unnest(${posIds}::text[], ${paymentIds}::text[]) as k(pos_id, payment_id)
    where d.pos_id = k.pos_id and d.payment_id = k.payment_id`;
}

/** The logs the projection appends to: observations (one array per payment, written whole), re-sends, windows. */
async function writeLogs(tx: Tx, s: string, b: Batch): Promise<void> {
  const added = new Map<PaymentState, string[]>();
  for (const o of b.added.observations) {
    const p = b.payments.get(paymentKey(o.posId, o.paymentId))!;
    const list = added.get(p);
    if (list) list.push(observationToRow(o));
    else added.set(p, [observationToRow(o)]);
  }
  const first = [...added].filter(([p]) => p.stored.observations === null);
  const more = [...added].filter(([p]) => p.stored.observations !== null);
  await insert(
    tx,
    s,
    'observations',
    'pos_id text, payment_id text, obs text',
    first.map(([p, rows]) => [p.posId, p.paymentId, `[${rows.join(',')}]`]),
  );
  // only the new observations travel: the stored array (loaded in this transaction) is extended in place,
  // `[stored…],[new…]` → `[stored…,new…]`, the same text as writing it whole (a payment's whole array each
  // time was most of the batch's upsert, 17 MB at 5,000 payments)
  if (more.length)
    await upsertRows(
      tx,
      qualified(s, 'observations'),
      columnsOf('pos_id text, payment_id text, obs text'),
      more.map(([p, rows]) => [p.posId, p.paymentId, `[${rows.join(',')}]`]),
      `on conflict (pos_id, payment_id) do update set obs = left(${qualified(s, 'observations')}.obs, -1) || ',' || substr(excluded.obs, 2)`,
    );
  await insert(
    tx,
    s,
    'resends',
    'event_id uuid, pos_id text, payment_id text, method text, requested_at timestamptz, outcome text',
    b.added.resends.map((r) => [r.eventId, r.posId, r.paymentId, r.method, r.requestedAt, r.outcome]),
  );
  await insert(
    tx,
    s,
    'sync_windows',
    'event_id uuid, pos_id text, window_from timestamptz, window_to timestamptz, completed_at timestamptz, report_id text',
    b.added.windows.map((w) => [w.eventId, w.posId, w.from, w.to, w.completedAt, w.reportId]),
  );
}

async function writeDirectory(tx: Tx, s: string, b: Batch): Promise<void> {
  const { former, byId, changedFormer, changedIds } = b.names;
  if (changedFormer.size) {
    const names = [...changedFormer];
    await tx`delete from ${tx(s)}.former_names where name = any(${names}::text[])`;
    await insert(
      tx,
      s,
      'former_names',
      'name text, sub_merchant_id text, event_id uuid',
      names.map((n) => [n, former.get(n)!.id, former.get(n)!.eventId]),
    );
  }
  if (changedIds.size) {
    const ids = [...changedIds];
    await tx`delete from ${tx(s)}.directory where sub_merchant_id = any(${ids}::text[])`;
    await insert(
      tx,
      s,
      'directory',
      'sub_merchant_id text, name text, event_id uuid',
      ids.map((id) => [id, byId.get(id)!.name, byId.get(id)!.eventId]),
    );
  }
}

async function writeAcceptances(tx: Tx, s: string, b: Batch): Promise<void> {
  const { applied, waiting } = b.lifecycle;
  if (applied.size)
    await tx`delete from ${tx(s)}.pending_acceptances where discrepancy_id = any(${[...applied]}::uuid[])`;
  await insert(
    tx,
    s,
    'pending_acceptances',
    'discrepancy_id uuid, accepted_by text, note text, accepted_at timestamptz, event_id uuid',
    [...(waiting?.values() ?? [])]
      .filter((a) => !a.stored)
      .map((a) => [a.discrepancyId, a.acceptedBy, a.note, a.acceptedAt, a.eventId]),
  );
}

/** The operations and receiver rows of every payment whose rows changed, replaced whole. */
async function writeOperations(tx: Tx, s: string, b: Batch): Promise<void> {
  const changed = [...b.payments.values()].filter((p) => p.rowsChanged);
  const replaced = changed.filter((p) => p.stored.observations !== null);
  await deletePayments(tx, s, 'operations', replaced);
  await deletePayments(tx, s, 'operation_receivers', replaced);
  if (changed.length === 0) return;
  const lookup = subMerchantLookup(b.names);
  const opRows: Cell[][] = [];
  const receiverRows: Cell[][] = [];
  for (const p of changed) {
    for (const op of operationsOf(p)) {
      opRows.push(operationCells(op));
      receiverRows.push(...receiverCells(op, lookup));
    }
  }
  await insert(tx, s, 'operations', OPERATION_COLUMNS, opRows);
  await insert(tx, s, 'operation_receivers', RECEIVER_COLUMNS, receiverRows);
}

/** Due times and report waits, where they differ from what was stored. */
async function writeSchedule(tx: Tx, s: string, b: Batch): Promise<void> {
  const payments = [...b.payments.values()];
  const waitsChanged = payments.filter((p) => !sameWaits(p.waits, p.stored.waits));
  await deletePayments(
    tx,
    s,
    'report_pending',
    waitsChanged.filter((p) => p.stored.waits.length > 0),
  );
  await insert(
    tx,
    s,
    'report_pending',
    'pos_id text, payment_id text, operation_key text, report_id text, date_time timestamptz',
    waitsChanged.flatMap((p) => p.waits.map((w) => [p.posId, p.paymentId, w.operationKey, w.reportId, w.dateTime])),
  );
  const dueChanged = payments.filter((p) => p.due !== p.stored.due);
  await deletePayments(
    tx,
    s,
    'due',
    dueChanged.filter((p) => p.stored.due !== null),
  );
  await insert(
    tx,
    s,
    'due',
    'pos_id text, payment_id text, due_at timestamptz',
    dueChanged.filter((p) => p.due !== null).map((p) => [p.posId, p.paymentId, new Date(p.due!).toISOString()]),
  );
}

/** The discrepancies the batch changed, through the core's writer. */
async function writeChangedDiscrepancies(tx: Tx, schema: string, b: Batch): Promise<void> {
  const rows = [...b.lifecycle.changed.values()];
  if (rows.length === 0) return;
  const stored = rows.filter((r) => b.storedDiscrepancies.has(r.id)).map((r) => r.id);
  await writeDiscrepancies(tx, schema, rows, stored);
}

export async function writeBatch(tx: Tx, schema: string, b: Batch): Promise<void> {
  await tx`update ${tx(schema)}.state set clock = ${b.clock === null ? null : new Date(b.clock)} where id = 1`;
  await writeLogs(tx, schema, b);
  await writeDirectory(tx, schema, b);
  await writeAcceptances(tx, schema, b);
  await writeOperations(tx, schema, b);
  await writeSchedule(tx, schema, b);
  await writeChangedDiscrepancies(tx, schema, b);
}

import { boundedMap } from '../bounded-map';
import type { BankConfig } from '../config/bank';
import type { PspProject } from '../config/env';
import type { Sql } from '../db/connect';
import { newEvent } from '../events/catalog';
import { WebhookResendRequested, healStream, type OperationMethod } from '../events/ingest-events';
import type { Logger } from '../log';
import { runProjections } from '../projector/runner';
import { createPspClient, type PspClient } from '../psp/client';
import { isStoreError } from '../store/errors';
import type { EventStore } from '../store/types';

/**
 * Healing (`recon heal`): an operation that the register or the period data show final
 * (success/failure), older than the grace period, for which no webhook arrived, gets one re-send
 * request (section 4.9). The request is recorded as WebhookResendRequested with an id derived from the
 * operation alone, so it is never asked twice; the webhook that follows arrives at the receiver and
 * is ingested like any other. Which operations are final and which had a webhook or a request, heal reads from
 * the healing index, a projection caught up through the runner before each project is judged.
 */

export interface HealDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly projects: readonly PspProject[];
  readonly log: Logger;
  readonly graceHours: number;
  /** the runner's settings (RECON_TIMEZONE, RECON_CONFIG's bank object), recorded with the index's build */
  readonly timezone: string;
  readonly bank?: BankConfig;
  readonly pspTimeoutMs?: number;
  /** re-send requests in flight at once per project (RECON_HEAL_CONCURRENCY); default 8 */
  readonly resendConcurrency?: number;
  readonly clientFor?: (project: PspProject) => PspClient;
}

export interface HealRequest {
  readonly posId: string;
  readonly orderId: string;
  readonly paymentId: string;
  readonly method: OperationMethod;
  readonly transactionId: string | null;
  readonly outcome: 'requested' | 'failed';
  readonly detail: string | null;
}

export interface HealReport {
  readonly candidates: number;
  readonly requested: number;
  readonly failed: number;
  readonly requests: HealRequest[];
}

/** The read model heal judges by (projections/operations-seen.ts). */
const INDEX = 'operations_seen';

/** Methods whose webhooks the interface describes (6.2–6.5) plus subscription charges. */
const HEALABLE: readonly OperationMethod[] = [
  'purchase',
  'auth',
  'credit',
  'p2p',
  'lookup',
  'capture',
  'void',
  'refund',
  'recurrent',
];

interface Unhealed {
  payment_id: string;
  method: string;
  order_id: string;
  transaction_id: string | null;
  recurring: boolean;
}

export async function healMissingWebhooks(
  deps: HealDeps,
  opts: { now?: Date; posIds?: readonly string[]; limit?: number; signal?: AbortSignal } = {},
): Promise<HealReport> {
  const now = opts.now ?? new Date();
  const projects = deps.projects.filter(
    (p) => !opts.posIds?.length || opts.posIds.some((id) => id.toLowerCase() === p.posId.toLowerCase()),
  );
  const requests: HealRequest[] = [];
  let candidates = 0;
  for (const project of projects) {
    // One heal run per project at a time (the nightly and the hourly job may overlap, in two workers):
    // the second waits, then catches the index up past the first's requests, and asks nothing twice.
    const lock = await deps.sql.reserve();
    try {
      await lock`select pg_advisory_lock(hashtextextended(${`recon:heal:${project.posId}`}, 0))`;
      await catchUpIndex(deps, opts.signal);
      const rows = await unhealed(deps, project.posId, now, opts.limit ?? 10_000);
      candidates += rows.length;
      if (rows.length === 0) continue;
      const client = deps.clientFor
        ? deps.clientFor(project)
        : createPspClient(project, { timeoutMs: deps.pspTimeoutMs, log: deps.log });
      const subscriptions = await subscriptionOrders(deps, project.posId, rows);
      // the PSP answers each request in a round trip: a few in flight bring a large backlog down by that factor
      const concurrency = deps.resendConcurrency ?? DEFAULT_RESEND_CONCURRENCY;
      const heals = await boundedMap(rows, concurrency, opts.signal, (row) =>
        heal(deps, client, project.posId, row, now, subscriptions),
      );
      requests.push(...heals);
    } finally {
      await lock`select pg_advisory_unlock(hashtextextended(${`recon:heal:${project.posId}`}, 0))`.catch(() => {});
      lock.release();
    }
  }
  return {
    candidates,
    requested: requests.filter((r) => r.outcome === 'requested').length,
    failed: requests.filter((r) => r.outcome === 'failed').length,
    requests,
  };
}

/** Re-send requests in flight at once when RECON_HEAL_CONCURRENCY is not given. */
export const DEFAULT_RESEND_CONCURRENCY = 8;

/** The project's final operations past the grace period with neither a webhook nor a re-send asked. */
async function unhealed(deps: HealDeps, posId: string, now: Date, limit: number): Promise<Unhealed[]> {
  const cutoff = new Date(now.getTime() - deps.graceHours * 3_600_000);
  return deps.sql<Unhealed[]>`
    select payment_id, method, order_id, transaction_id, recurring from recon.operations_seen
    where pos_id = ${posId} and final_status is not null and webhook_at is null and resend_requested_at is null
      and order_id is not null and final_at < ${cutoff} and method = any(${[...HEALABLE]}::text[])
    order by final_at, payment_id, method
    limit ${limit}`;
}

/** Asks the PSP to re-send one operation's webhook and records the request (or its failure). */
async function heal(
  deps: HealDeps,
  client: PspClient,
  posId: string,
  row: Unhealed,
  now: Date,
  subscriptions: ReadonlySet<string>,
): Promise<HealRequest> {
  const method = row.method as OperationMethod;
  // A subscription charge is re-sent through its initial purchase, naming the charge's transaction.
  const operation = method === 'recurrent' ? 'purchase' : method;
  let transactionId = row.recurring ? row.transaction_id : null;
  let outcome: HealRequest['outcome'] = 'requested';
  let detail: string | null = null;
  try {
    // A subscription's initial purchase too: without its transaction id the PSP re-sends the latest charge
    // (interface 4.9), and the purchase's webhook never comes (found in review).
    const named = method === 'recurrent' || (method === 'purchase' && subscriptions.has(row.order_id));
    if (named && !transactionId) {
      // The register does not carry the charge's transaction id; the order's transactions (4.4) do.
      // Without it the PSP would re-send the subscription's latest charge, maybe not this one.
      const records = await client.getOrderTransactions(row.order_id);
      transactionId =
        records.find(
          (r) =>
            r.payment_id === row.payment_id && (method !== 'purchase' || r.method === 'purchase') && r.transaction_id,
        )?.transaction_id ?? null;
      if (!transactionId)
        throw new Error(`transaction id of subscription charge ${row.payment_id} not found in order ${row.order_id}`);
    }
    await client.resendWebhook(row.order_id, operation, transactionId ? { transactionId } : undefined);
  } catch (e) {
    outcome = 'failed';
    const code = (e as { code?: unknown }).code;
    detail = `${typeof code === 'string' ? `${code}: ` : ''}${(e as Error).message}`;
  }
  const key = { posId, orderId: row.order_id, paymentId: row.payment_id, operation: method, transactionId };
  const data = { ...key, requestedAt: now.toISOString(), outcome, detail };
  // A request is keyed by the operation (never repeated); a failure by its time (tried again next run).
  const event =
    outcome === 'requested'
      ? newEvent(WebhookResendRequested, data, { idContent: { ...key, outcome } })
      : newEvent(WebhookResendRequested, data);
  try {
    await deps.store.append(healStream(posId), [event]);
  } catch (e) {
    if (!isStoreError(e, 'EVENT_ID_CONFLICT')) throw e;
    // Another heal run asked for it already: nothing to do.
  }
  deps.log.info('webhook re-send', { posId, paymentId: row.payment_id, method, outcome, detail });
  return { posId, orderId: row.order_id, paymentId: row.payment_id, method, transactionId, outcome, detail };
}

/**
 * The candidates' orders that have subscription charges (their purchases' re-sends name a transaction), in
 * one query: asked per purchase, each was a scan of the index by order (about 4 re-sends a second at 100k
 * payments, issue 26).
 */
async function subscriptionOrders(deps: HealDeps, posId: string, rows: readonly Unhealed[]): Promise<Set<string>> {
  const orders = [...new Set(rows.filter((r) => r.method === 'purchase').map((r) => r.order_id))];
  if (orders.length === 0) return new Set();
  const found = await deps.sql<{ order_id: string }[]>`
    select distinct order_id from recon.operations_seen
    where pos_id = ${posId} and order_id = any(${orders}::text[]) and (method = 'recurrent' or recurring)`;
  return new Set(found.map((r) => r.order_id));
}

/**
 * Brings the healing index up to the store's head as it is now. Another runner (the worker's follower, a
 * second heal) may hold the index for the length of one batch: the runner then skips it, and this waits a
 * moment and tries again, because judging from an index behind the store would ask for operations twice.
 */
async function catchUpIndex(deps: HealDeps, signal: AbortSignal | undefined): Promise<void> {
  const until = await deps.store.headPosition();
  for (;;) {
    signal?.throwIfAborted();
    const report = await runProjections(deps, {
      names: [INDEX],
      ...(until ? { until } : {}),
      ...(signal ? { signal } : {}),
    });
    const index = report.projections[0];
    if (index && !index.busy && index.status === 'live') return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

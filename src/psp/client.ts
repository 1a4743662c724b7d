import { DateTime } from 'luxon';
import type { PspProject } from '../config/env';
import { checkText } from '../input-rules';
import { PspError } from './errors';
import { MAX_ID_TEXT_CHARS } from './field-readers';
import { isPlainObject, parseJsonExact } from './json';
import {
  paymentRecord,
  registerStartResponse,
  type Method,
  type PaymentRecord,
  type RegisterField,
  type Status,
} from './schemas';
import { type Call, createPspTransport, type PspClientOptions, type PspTransport, seg, single } from './transport';

export type { PspClientOptions, RequestSigner } from './transport';

/**
 * The PSP client the worker reads with: register reports, period transactions, an operation or an order's
 * transactions, and webhook re-sends (sync and healing). It moves no money; purchases and subscriptions are
 * made by purchase-client.ts, which the worker's paths never import. See docs/psp.md for each decision.
 */

export interface RegisterQuery {
  from: Date;
  to: Date;
  statuses?: Status[] | string[];
  methods?: Method[] | string[];
  transactionDetails?: RegisterField[] | string[];
}

export interface PspClient {
  getTransaction(orderId: string, operation: string): Promise<PaymentRecord>;
  getOrderTransactions(orderId: string): Promise<PaymentRecord[]>;
  /** [from, to) as instants; yields each record's exact JSON text */
  periodTransactions(from: Date, to: Date): AsyncGenerator<string>;
  startRegisterReport(q: RegisterQuery): Promise<{ reportId: string; count: number }>;
  /** one fetch attempt: not ready, or the records as a stream of exact JSON texts */
  fetchRegisterReport(reportId: string): Promise<{ ready: false } | { ready: true; records: AsyncGenerator<string> }>;
  /**
   * Asks the PSP to send an operation's webhook again. A 2xx is the request accepted: the record when the
   * answer is one, else null (the PSP's material shows other answers to a re-send, and asking again would
   * only repeat a request already taken).
   */
  resendWebhook(orderId: string, operation: string, opts?: { transactionId?: string }): Promise<PaymentRecord | null>;
  readonly project: PspProject;
}

/** The PSP's register limit: a period of at most 31 days. */
export const MAX_REGISTER_PERIOD_MS = 31 * 24 * 3_600_000;
/** A not-ready answer is small; a body larger than this is a report and is streamed. */
const PEEK_BYTES = 64 * 1024;

/** ISO 8601 with an explicit offset, as the register start wants it ("2024-03-01T00:00:00.000+00:00"). */
export function isoWithOffset(d: Date): string {
  return DateTime.fromJSDate(d, { zone: 'utc' }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSSZZ");
}

export function createPspClient(project: PspProject, opts: PspClientOptions = {}): PspClient {
  return readingClient(createPspTransport(project, opts), opts);
}

/**
 * The reading calls over a transport (the purchase client shares its transport with them); each call is a
 * function below taking the transport.
 */
export function readingClient(t: PspTransport, opts: Pick<PspClientOptions, 'periodEnd'> = {}): PspClient {
  const endShift = (opts.periodEnd ?? 'inclusive') === 'inclusive' ? 1 : 0;
  return {
    project: t.project,
    getTransaction: (orderId, operation) => getTransaction(t, orderId, operation),
    getOrderTransactions: (orderId) => getOrderTransactions(t, orderId),
    periodTransactions: (from, to) => periodTransactions(t, endShift, from, to),
    startRegisterReport: (q) => startRegisterReport(t, endShift, q),
    fetchRegisterReport: (reportId) => fetchRegisterReport(t, reportId),
    resendWebhook: (orderId, operation, o) => resendWebhook(t, orderId, operation, o),
  };
}

async function getOrderTransactions(t: PspTransport, orderId: string): Promise<PaymentRecord[]> {
  const call: Call = {
    method: 'GET',
    base: 'base',
    path: `/api/v1/pos/${t.pos()}/orders/${seg(orderId)}`,
    endpoint: 'GET /api/v1/pos/:pos_id/orders/:order_id',
    retry: true,
  };
  const a = t.expectOk(call, await t.send(call));
  return t.recordsOf(call, t.jsonOf(call, a), a.status);
}

async function getTransaction(t: PspTransport, orderId: string, operation: string): Promise<PaymentRecord> {
  const call: Call = {
    method: 'GET',
    base: 'base',
    path: `/api/v1/pos/${t.pos()}/orders/${seg(orderId)}/${seg(operation)}`,
    endpoint: 'GET /api/v1/pos/:pos_id/orders/:order_id/:operation',
    retry: true,
  };
  const a = t.expectOk(call, await t.send(call));
  return t.recordOf(call, t.jsonOf(call, a), a.status);
}

async function* periodTransactions(t: PspTransport, endShift: number, from: Date, to: Date): AsyncGenerator<string> {
  const call: Call = {
    method: 'GET',
    base: 'base',
    path: `/api/v1/pos/${t.pos()}/transactions`,
    endpoint: 'GET /api/v1/pos/:pos_id/transactions',
    query: { startDate: String(from.getTime()), enddate: String(to.getTime() - endShift) },
    retry: true,
    stream: true,
  };
  if (!(from.getTime() < to.getTime()))
    throw t.validationError(call.endpoint, [{ field: 'enddate', message: 'the period end must be after its start' }]);
  const a = t.expectOk(call, await t.send(call));
  yield* t.items(call, a);
}

async function startRegisterReport(
  t: PspTransport,
  endShift: number,
  q: RegisterQuery,
): Promise<{ reportId: string; count: number }> {
  const endpoint = 'POST /streaming-report/start';
  const span = q.to.getTime() - q.from.getTime();
  if (!(span > 0))
    throw t.validationError(endpoint, [{ field: 'end_date', message: 'the period end must be after its start' }]);
  if (span > MAX_REGISTER_PERIOD_MS)
    throw t.validationError(endpoint, [{ field: 'end_date', message: 'the register period is at most 31 days' }]);
  const body: Record<string, unknown> = {
    project_id: t.project.posId,
    start_date: isoWithOffset(q.from),
    end_date: isoWithOffset(new Date(q.to.getTime() - endShift)),
  };
  if (q.statuses && q.statuses.length > 0) body.statuses = q.statuses;
  if (q.methods && q.methods.length > 0) body.methods = q.methods;
  if (q.transactionDetails && q.transactionDetails.length > 0) body.transaction_details = q.transactionDetails;
  // Starting a report moves no money: repeating it after a lost answer costs only a second report.
  const call: Call = {
    method: 'POST',
    base: 'report',
    path: '/streaming-report/start',
    endpoint,
    body: JSON.stringify(body),
    retry: true,
  };
  const a = t.expectOk(call, await t.send(call));
  const r = registerStartResponse.safeParse(t.jsonOf(call, a));
  // the report id is stored with every record and window of the report, and keyed by the read models: an id
  // PostgreSQL cannot store (a NUL) or index (thousands of characters) is a bad answer, the window read again
  const id = r.success ? checkText(r.data.report_id, { maxLength: MAX_ID_TEXT_CHARS }) : null;
  if (!r.success || (id && !id.ok)) {
    const field = r.success ? 'report_id' : r.error.issues[0]?.path.map(String).join('.') || '(root)';
    const why = r.success ? (id && !id.ok ? id.reason : '') : r.error.issues[0]?.message;
    throw new PspError('PSP_BAD_RESPONSE', `PSP answer on ${endpoint} is not a report start: ${field}: ${why}`, {
      endpoint,
      status: a.status,
      field,
    });
  }
  return { reportId: r.data.report_id, count: r.data.count };
}

async function fetchRegisterReport(
  t: PspTransport,
  reportId: string,
): Promise<{ ready: false } | { ready: true; records: AsyncGenerator<string> }> {
  const call: Call = {
    method: 'GET',
    base: 'report',
    path: `/streaming-report/fetch/${seg(reportId)}`,
    endpoint: 'GET /streaming-report/fetch/:report_id',
    retry: true,
    stream: true,
  };
  const a = await t.send(call);
  if (a.status < 200 || a.status >= 300) {
    // The not-ready answer's HTTP status is not published: the body decides.
    if (isNotReady(a.text)) return { ready: false };
    throw t.httpError(call, a.status, a.text, a.headers, a.attempts);
  }
  // Peek: a small complete body may be the not-ready object; anything larger is a report.
  const head: Uint8Array[] = [];
  let size = 0;
  let ended = true;
  const it = a.body ?? single(new TextEncoder().encode(a.text));
  for (;;) {
    const r = await it.next();
    if (r.done) break;
    head.push(r.value);
    size += r.value.byteLength;
    if (size > PEEK_BYTES) {
      ended = false;
      break;
    }
  }
  if (ended && isNotReady(Buffer.concat(head).toString('utf8'))) return { ready: false };
  const body = ended ? single(Buffer.concat(head)) : resume(head, it);
  return { ready: true, records: t.items(call, { ...a, body }) };
}

async function resendWebhook(
  t: PspTransport,
  orderId: string,
  operation: string,
  o: { transactionId?: string } = {},
): Promise<PaymentRecord | null> {
  const query: Record<string, string> = { callback: 'true' };
  if (o.transactionId) query.transactionId = o.transactionId;
  // Repeating it is safe: webhooks may arrive more than once by design.
  const call: Call = {
    method: 'GET',
    base: 'base',
    path: `/api/v1/pos/${t.pos()}/orders/${seg(orderId)}/${seg(operation)}`,
    endpoint: 'GET /api/v1/pos/:pos_id/orders/:order_id/:operation?callback=true',
    query,
    retry: true,
  };
  const a = t.expectOk(call, await t.send(call));
  const p = parseJsonExact(a.text);
  const r = p.ok ? paymentRecord.safeParse(p.value) : undefined;
  if (r?.success) return r.data;
  t.log.info('webhook re-send accepted; the answer is not a payment record', {
    endpoint: call.endpoint,
    status: a.status,
  });
  return null;
}

function isNotReady(text: string): boolean {
  const p = parseJsonExact(text);
  return p.ok && isPlainObject(p.value) && p.value.code === 'report_not_ready';
}

async function* resume(head: Uint8Array[], rest: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield* head;
  yield* rest;
}

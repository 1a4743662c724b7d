import { registerObserved, periodObserved, webhookReceived, type Keyed } from '../../src/ingest/observations';
import { newEvent } from '../../src/events/catalog';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { parseSubMerchantCsv } from '../../src/ingest/sub-merchants';
import { parsePeriodRecord, parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import { REGISTER_FIELDS, periodRecord, registerRows, webhookBody } from '../../src/sandbox/render';
import { generateScenario, type Scenario, type ScenarioOptions } from '../../src/sandbox/scenario';
import type { AppendRequest } from '../../src/store/types';

/**
 * A realistic stream of ingest events derived from the sandbox's scenario: the sub-merchant directory,
 * then per operation the register rows (one per receiver), the period record and the webhook, parsed by
 * the real PSP parsers into the real event definitions. Operations still pending are first observed as
 * `success` (the PSP's "page changed between two fetches" fault) and then as they are, so the journal's
 * replacement of an earlier observation is exercised. Lazy: nothing but one operation is in memory.
 */

export interface StreamOptions
  extends Pick<ScenarioOptions, 'seed' | 'payments' | 'month' | 'timezone' | 'subMerchants' | 'injections'> {
  /** events per append (one appendMany) */
  readonly chunk?: number;
}

const NOW = new Date('2030-01-01T00:00:00.000Z');

function observation(source: 'register' | 'period', at: number) {
  const day = new Date(at).toISOString().slice(0, 10);
  return {
    source,
    reportId: `${source}-${day}`,
    window: { from: `${day}T00:00:00.000Z`, to: `${day}T23:59:59.999Z` },
    observedAt: new Date(at + 86_400_000).toISOString(),
  };
}

export function* directoryEvents(scenario: Scenario): Generator<Keyed> {
  const csv = parseSubMerchantCsv(scenario.subMerchantCsv(), 'scenario.csv');
  if (!csv.ok) throw new Error(`scenario directory: ${JSON.stringify(csv.issues)}`);
  for (const row of csv.rows) {
    const data = { subMerchantId: row.subMerchantId, name: row.name, reserveHoldDays: row.reserveHoldDays };
    yield {
      stream: subMerchantStream(row.subMerchantId),
      event: newEvent(SubMerchantRegistered, data, { idContent: { ...data, supersedes: null } }),
    };
  }
}

export function* operationEvents(scenario: Scenario): Generator<Keyed> {
  const opts = { fields: REGISTER_FIELDS, projectName: 'shop', entityName: 'marketplace' };
  for (const op of scenario.operations()) {
    const parseOpts = { now: NOW };
    const rows =
      op.status === 'pending'
        ? [...registerRows(op, { ...opts, lateStatusChange: true }), ...registerRows(op, opts)]
        : registerRows(op, opts);
    for (const raw of rows) {
      const r = parseRegisterRecord(raw, parseOpts);
      if (!r.ok) continue;
      yield registerObserved(op.posId, raw, r.value, observation('register', op.at) as never);
    }
    const period = periodRecord(op);
    if (period) {
      const p = parsePeriodRecord(period, parseOpts);
      if (p.ok) yield periodObserved(op.posId, period, p.value, observation('period', op.at) as never);
    }
    if (op.webhook === 'sent') {
      const body = webhookBody(op);
      const w = parseWebhookPayload(body, parseOpts);
      if (w.ok)
        yield webhookReceived(op.posId, body, w.value, {
          receivedAt: new Date(op.processedAt + 1000).toISOString(),
          remoteAddress: '127.0.0.1',
        });
    }
  }
}

/** Append requests of `chunk` events each (grouped by stream inside a chunk, first-seen order). */
export function* appendChunks(items: Iterable<Keyed>, chunk: number): Generator<AppendRequest[]> {
  let buf: Keyed[] = [];
  const flush = (): AppendRequest[] => {
    const byStream = new Map<string, AppendRequest & { events: Keyed['event'][] }>();
    for (const k of buf) {
      let req = byStream.get(k.stream);
      if (!req) {
        req = { stream: k.stream, events: [] };
        byStream.set(k.stream, req);
      }
      req.events.push(k.event);
    }
    buf = [];
    return [...byStream.values()];
  };
  for (const k of items) {
    buf.push(k);
    if (buf.length >= chunk) yield flush();
  }
  if (buf.length) yield flush();
}

export function scenarioFor(opts: StreamOptions): Scenario {
  return generateScenario({
    seed: opts.seed,
    payments: opts.payments ?? 300,
    month: opts.month ?? '2025-01',
    timezone: opts.timezone ?? 'UTC',
    subMerchants: opts.subMerchants ?? 12,
    ...(opts.injections !== undefined ? { injections: opts.injections } : {}),
  });
}

export function* scenarioEvents(scenario: Scenario): Generator<Keyed> {
  yield* directoryEvents(scenario);
  yield* operationEvents(scenario);
}

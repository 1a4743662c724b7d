import http from 'node:http';
import https from 'node:https';
import { encodeBase64Url, sign } from '../psp/signature';
import { postForm } from './http-post';
import type { Operation } from './model';
import { createRng, hashSeed } from './random';
import { webhookBody } from './render';

/**
 * Webhooks as the PSP sends them (section 6.1): POST, form-urlencoded `data` (base64url JSON) and
 * `signature` (section 5.4, computed with the project's API secret).
 */

export interface SignedWebhook {
  /** the JSON text before encoding */
  readonly body: string;
  readonly data: string;
  readonly signature: string;
  /** the form-urlencoded request body */
  readonly form: string;
}

export function signWebhook(op: Operation, apiSecret: string): SignedWebhook {
  const body = webhookBody(op);
  const data = encodeBase64Url(body);
  const signature = sign(apiSecret, data);
  return { body, data, signature, form: formOf(data, signature) };
}

/**
 * `data=…&signature=…` as URLSearchParams writes it, without building one per webhook (it cost as much as
 * rendering the body; issue 26): base64url needs no escaping and encodeURIComponent escapes the signature's
 * padding `=` as %3D as it does. Any other text goes through URLSearchParams.
 */
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const SIGNATURE = /^[A-Za-z0-9_-]*=*$/;
export function formOf(data: string, signature: string): string {
  if (BASE64URL.test(data) && SIGNATURE.test(signature))
    return `data=${data}&signature=${encodeURIComponent(signature)}`;
  return new URLSearchParams({ data, signature }).toString();
}

/** 'payment': server_url of the payment; 'recurring': notification_url of a subscription charge. */
export type WebhookTarget = (
  posId: string,
  info: { kind: 'payment' | 'recurring'; orderId: string },
) => string | URL | undefined;

export type PostOutcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/**
 * Keep-alive connection pools for the stand-in PSP's POSTs: the sandbox shares recon's thread in `recon demo`
 * and the month bench, and undici's `fetch` cost it about an eighth of the webhooks stage (issue 26). Plain
 * http: goes over http-post.ts's connections (node:http's client cost three times recon's server per
 * webhook); these agents serve the rest. Idle sockets do not hold the process open (the agent unrefs them).
 */
const AGENTS = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/**
 * POSTs a form; the answer's status decides (its body is read and dropped, a fault in it ignored as before).
 * A kept-alive connection the server closed while it sat idle fails the next request sent on it before any
 * answer (ECONNRESET, "socket hang up"): the server never read that request, so it is sent once more on a
 * new connection, as Node's documentation advises; any other failure is the outcome.
 */
export async function postWebhook(url: string | URL, form: string, timeoutMs: number): Promise<PostOutcome> {
  const first = await postOnce(url, form, timeoutMs);
  return first.staleConnection ? (await postOnce(url, form, timeoutMs)).outcome : first.outcome;
}

function postOnce(
  url: string | URL,
  form: string,
  timeoutMs: number,
): Promise<{ outcome: PostOutcome; staleConnection: boolean }> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (out: PostOutcome, staleConnection = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ outcome: out, staleConnection });
    };
    let target: URL;
    try {
      target = typeof url === 'string' ? new URL(url) : url;
    } catch (e) {
      done({ ok: false, status: null, error: (e as Error).message });
      return;
    }
    if (target.protocol === 'http:') {
      void postForm(target, form, timeoutMs).then((a) =>
        done(
          a.status === null ? { ok: false, status: null, error: a.error ?? 'no answer' } : outcomeOf(a.status),
          a.staleConnection,
        ),
      );
      return;
    }
    const secure = target.protocol === 'https:';
    const body = Buffer.from(form, 'utf8');
    const req = (secure ? https : http).request(
      target,
      {
        method: 'POST',
        agent: secure ? AGENTS.https : AGENTS.http,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': body.length },
      },
      (res) => {
        const outcome = outcomeOf(res.statusCode ?? 0);
        res.on('error', () => done(outcome));
        res.on('close', () => done(outcome));
        res.on('end', () => done(outcome));
        res.resume();
      },
    );
    timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (e) => {
      const reset = (e as NodeJS.ErrnoException).code === 'ECONNRESET';
      done({ ok: false, status: null, error: e.message }, reset && req.reusedSocket);
    });
    req.end(body);
  });
}

function outcomeOf(status: number): PostOutcome {
  return status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` };
}

export interface DeliveryOptions {
  /** only operations with `at` in [from, to) */
  readonly range?: { readonly from: Date | number; readonly to: Date | number };
  /** share of webhooks sent twice (the second copy right after, or later when reordered) */
  readonly duplicateRate?: number;
  /** shuffle the sending order within consecutive blocks of this many webhooks (1: in order) */
  readonly reorderWindow?: number;
  /** pause before each POST, per sender */
  readonly delayMs?: number;
  /** share of webhooks dropped on delivery on top of the scenario's; a re-send request recovers them */
  readonly lossRate?: number;
  /** parallel senders (default 4) */
  readonly concurrency?: number;
  readonly timeoutMs?: number;
  /** stop after this many operations */
  readonly limit?: number;
  readonly signal?: AbortSignal;
}

export interface DeliveryStats {
  /** operations whose webhook was due */
  operations: number;
  /** POSTs made (duplicates included) */
  attempted: number;
  /** POSTs answered 2xx */
  delivered: number;
  /** POSTs answered otherwise, or failed on the network */
  failed: number;
  duplicatesSent: number;
  /** scenario webhooks not sent: lost for good or lost but re-sendable (ground truth) */
  lostByScenario: number;
  /** dropped by lossRate (re-sendable) */
  lostOnDelivery: number;
  byStatus: Record<string, number>;
  /** first few failures, for diagnosis */
  errors: string[];
}

export interface DeliveryJob {
  readonly op: Operation;
  readonly url: string | URL;
  readonly secret: string;
}

/**
 * Sends the jobs with the knobs applied. Deterministic in what is sent (duplicates, losses, order of
 * dispatch) for a given seed; with concurrency > 1 arrival order also depends on the receiver.
 */
export async function deliver(
  jobs: Iterable<DeliveryJob | { lost: true }>,
  seed: string,
  opts: DeliveryOptions = {},
): Promise<DeliveryStats> {
  const stats: DeliveryStats = {
    operations: 0,
    attempted: 0,
    delivered: 0,
    failed: 0,
    duplicatesSent: 0,
    lostByScenario: 0,
    lostOnDelivery: 0,
    byStatus: {},
    errors: [],
  };
  const r = createRng(hashSeed(seed, 'delivery'));
  const window = Math.max(1, opts.reorderWindow ?? 1);
  const timeoutMs = opts.timeoutMs ?? 10_000;

  /** POSTs in dispatch order, produced lazily block by block */
  function* sends(): Generator<{ job: DeliveryJob; copy: boolean }> {
    let block: Array<{ job: DeliveryJob; copy: boolean }> = [];
    const flush = function* () {
      for (let i = block.length - 1; i > 0 && window > 1; i--) {
        const j = Math.floor(r.next() * (i + 1));
        [block[i], block[j]] = [block[j]!, block[i]!];
      }
      yield* block;
      block = [];
    };
    for (const job of jobs) {
      if (opts.limit !== undefined && stats.operations >= opts.limit) break;
      stats.operations++;
      if ('lost' in job) {
        stats.lostByScenario++;
        continue;
      }
      if (opts.lossRate && r.chance(opts.lossRate)) {
        stats.lostOnDelivery++;
        continue;
      }
      block.push({ job, copy: false });
      if (opts.duplicateRate && r.chance(opts.duplicateRate)) block.push({ job, copy: true });
      if (block.length >= window) yield* flush();
    }
    yield* flush();
  }

  const queue = sends();
  const worker = async () => {
    for (;;) {
      if (opts.signal?.aborted) return;
      const next = queue.next();
      if (next.done) return;
      const { job, copy } = next.value;
      if (opts.delayMs) await new Promise((res) => setTimeout(res, opts.delayMs));
      const signed = signWebhook(job.op, job.secret);
      stats.attempted++;
      if (copy) stats.duplicatesSent++;
      const out = await postWebhook(job.url, signed.form, timeoutMs);
      const key = out.status === null ? 'network' : String(out.status);
      stats.byStatus[key] = (stats.byStatus[key] ?? 0) + 1;
      if (out.ok) stats.delivered++;
      else {
        stats.failed++;
        if (stats.errors.length < 10) stats.errors.push(`${job.op.orderId} ${job.op.method}: ${out.error}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 4) }, worker));
  return stats;
}

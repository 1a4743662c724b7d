import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonText } from './render';
import type { SandboxStats, SandboxWorld } from './sandbox-world';

/** One request and its answer, as the sandbox's route handlers see them. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly body: string;
  /** the truncation fault drawn for this request: a 200 answer is cut in the middle */
  readonly truncate: boolean;
  readonly stats: SandboxStats;
}

const MAX_BODY = 1 << 20;

/** An answer with the PSP's error body `{ message, args: { code } }`, thrown by the handlers. */
export interface HttpFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryAfter?: number;
}
const HTTP_FAILURE = Symbol('sandbox http failure');
export function HttpError(status: number, code: string, message: string, retryAfter?: number): HttpFailure {
  return Object.assign(new Error(message), { status, code, retryAfter, [HTTP_FAILURE]: true });
}
const isHttpFailure = (e: unknown): e is HttpFailure => typeof e === 'object' && e !== null && HTTP_FAILURE in e;

/** The PSP's error answer for what a handler threw; an answer already begun is cut instead. */
export function answerFailure(res: ServerResponse, e: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const err = isHttpFailure(e) ? e : HttpError(500, 'internal_error', (e as Error).message);
  const retryAfter = err.retryAfter;
  res.writeHead(err.status, {
    'content-type': 'application/json',
    ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
  });
  res.end(JSON.stringify({ message: err.message, args: { code: err.code } }));
}

export function answerJson(ctx: Exchange, status: number, value: unknown, headers: Record<string, string> = {}): void {
  let text = jsonText(value);
  if (ctx.truncate && status === 200) {
    ctx.stats.faults.truncated++;
    text = text.slice(0, Math.max(1, Math.floor(text.length / 2)));
  }
  ctx.res.writeHead(status, { 'content-type': 'application/json', ...headers });
  ctx.res.end(text);
}

export function parseBody(ctx: Exchange): unknown {
  if (!ctx.body) return undefined;
  try {
    return JSON.parse(ctx.body);
  } catch {
    throw HttpError(400, 'invalid_json', 'The request body is not valid JSON');
  }
}

/** writes a JSON array from items in 64 KiB chunks, waiting for the socket to drain */
export async function streamArray(ctx: Exchange, items: Iterable<string>): Promise<void> {
  const { res } = ctx;
  res.writeHead(200, { 'content-type': 'application/json' });
  let buf = '[';
  let n = 0;
  const cutAt = ctx.truncate ? 1 : Infinity;
  for (const item of items) {
    buf += n === 0 ? item : `,${item}`;
    n++;
    if (n > cutAt) {
      // truncated JSON: cut inside the second record and end the response
      ctx.stats.faults.truncated++;
      res.end(buf.slice(0, buf.length - Math.ceil(item.length / 2)));
      return;
    }
    if (buf.length >= 65536) {
      if (res.destroyed) return;
      const flushed = res.write(buf);
      buf = '';
      if (!flushed) await drained(res);
    }
  }
  res.end(`${buf}]`);
}

/** The request's body, or undefined when it is larger than the sandbox accepts. */
export async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export function msParam(url: URL, name: string): number {
  const v = url.searchParams.get(name);
  if (v === null || !/^\d{1,16}$/.test(v))
    throw HttpError(400, 'validation_error', `${name}: Unix time in milliseconds required`);
  return Number(v);
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A path of the sandbox and its handler. */
export interface SandboxRoute {
  readonly method: string;
  readonly pattern: RegExp;
  readonly name: string;
  readonly handle: (world: SandboxWorld, ctx: Exchange, m: RegExpExecArray) => Promise<void> | void;
}

import { bodyText, strictForm } from '../http/body';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Html } from './html';

/**
 * Every answer of the console carries the same protections (docs/console.md, "Security"): a strict
 * Content-Security-Policy (scripts and styles only from the console's own files, no inline script, no
 * framing, forms only to itself), X-Frame-Options DENY for older browsers, no caching of pages, no sniffing.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

export function sendHtml(
  res: ServerResponse,
  status: number,
  body: Html,
  headers: Record<string, string | string[]> = {},
) {
  const text = body.text;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** 303 See Other: after a POST, the browser GETs the page (works the same with htmx and without JavaScript). */
export function redirect(res: ServerResponse, to: string, headers: Record<string, string | string[]> = {}) {
  res.writeHead(303, { ...SECURITY_HEADERS, location: to, 'content-length': 0, ...headers });
  res.end();
}

export function sendText(res: ServerResponse, status: number, text: string, type: string, cache = 'no-store') {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'cache-control': cache,
    'content-type': type,
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * A form body (application/x-www-form-urlencoded), at most `limit` bytes; null when larger or not a form;
 * `not_utf8` when it holds text that is not UTF-8 (refused, never stored as U+FFFD: src/http/body.ts).
 */
export async function formOf(req: IncomingMessage, limit = 16_384): Promise<URLSearchParams | null | 'not_utf8'> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const read = await bodyText(req, limit);
  if (type !== 'application/x-www-form-urlencoded' || (!read.ok && read.problem === 'too_large')) return null;
  return (read.ok && strictForm(read.text)) || 'not_utf8';
}

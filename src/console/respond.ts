import { bodyText, strictForm } from '../request-body';
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
 * The most a console form may be: a text field takes 4,000 characters, which a browser sends as up to 36,000
 * bytes (three bytes of UTF-8 each, percent-encoded), with room for the form's other fields. 16 KiB had refused
 * a comment of 2,800 Ukrainian letters.
 */
export const FORM_LIMIT = 65_536;

/**
 * A form body (application/x-www-form-urlencoded), at most `limit` bytes; `too_large` when larger (said so,
 * not taken for a forged form), null when not a form; `not_utf8` when it holds text that is not UTF-8 (refused,
 * never stored as U+FFFD: src/request-body.ts).
 */
export async function formOf(
  req: IncomingMessage,
  limit = FORM_LIMIT,
): Promise<URLSearchParams | 'too_large' | 'not_utf8' | null> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const read = await bodyText(req, limit);
  if (!read.ok && read.problem === 'too_large') return 'too_large';
  if (type !== 'application/x-www-form-urlencoded') return null;
  return (read.ok && strictForm(read.text)) || 'not_utf8';
}

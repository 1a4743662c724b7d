import { format } from 'node:util';
import type { LogLevel } from './config/env';
import { maskPans } from './input-rules';

/**
 * Structured logs: one JSON object per line on stderr. Every line passes through a scrubber that
 * removes the configured secret values and masks card numbers as the store does, so that neither can
 * reach a log whatever a caller passes in.
 */

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

// Fields whose values are never written, whatever they hold.
const SENSITIVE_KEY =
  /^(cc_number|card_cvv|cvv|cvc|api_?secret|api_?key|endpoints_?key|password|authorization|x-api-auth|x-api-key|signature|token|secret)$/i;

/**
 * `text` with its card numbers masked as the store masks them (maskPans in src/input-rules.ts): a run of a card
 * number's shape that passes the check digit. Any other run of digits is a figure someone reads (an amount in
 * minor units, a limit, a position, an id) and is written as it is.
 */
export function maskPan(text: string): string {
  return maskPans(text);
}

export function scrubber(secrets: readonly string[]): (text: string) => string {
  // a log line is JSON, where a secret's `"`, `\` or control characters are escaped: each is looked for as written there too
  const forms = secrets.filter((s) => s.length >= 4).flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]);
  const list = [...new Set(forms)].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const s of list) if (out.includes(s)) out = out.split(s).join('[redacted]');
    return maskPan(out);
  };
}

function redactKeys(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') {
    return typeof value === 'bigint' ? value.toString() : value;
  }
  if (value instanceof Error)
    return {
      name: value.name,
      message: value.message,
      ...('code' in value ? { code: (value as { code: unknown }).code } : {}),
    };
  if (Array.isArray(value)) return value.map((v) => redactKeys(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SENSITIVE_KEY.test(k) ? '[redacted]' : redactKeys(v, depth + 1);
  return out;
}

export interface LoggerOptions {
  readonly level?: LogLevel;
  readonly secrets?: readonly string[];
  readonly write?: (line: string) => void;
  readonly base?: Record<string, unknown>;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const threshold = ORDER[opts.level ?? 'info'];
  const scrub = scrubber(opts.secrets ?? []);
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const base = opts.base ?? {};
  const emit = (level: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < threshold) return;
    const record = { time: new Date().toISOString(), level, msg, ...(redactKeys({ ...base, ...fields }) as object) };
    write(scrub(JSON.stringify(record)));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...opts, base: { ...base, ...fields } }),
  };
}

export const silentLogger: Logger = createLogger({ level: 'silent' });

/**
 * A command's stdout carries its output alone (JSON that parses, a table that is a table): whatever a library
 * prints with console.log/info/debug goes to stderr with the logs instead.
 */
export function consoleToStderr(target: { write(text: string): unknown } = process.stderr): void {
  const toStderr = (...args: unknown[]) => {
    target.write(`${format(...args)}\n`);
  };
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

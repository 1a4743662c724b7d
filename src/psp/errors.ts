import { type ErrorKind, ReconError } from '../errors';
import { maskPan } from '../log';
import type { Violation } from './validate';

/**
 * Errors of the PSP client. Each carries a code, and when known the HTTP status, the PSP's own code
 * and message, and the endpoint (a path template such as `GET /api/v1/pos/:pos/orders/:order`). It
 * never carries the API key, secret, endpoints key, a card number or a CVV.
 */

export type PspErrorCode =
  | 'PSP_HTTP_ERROR' // the PSP answered with an error status
  | 'PSP_TIMEOUT' // no (complete) answer within the timeout
  | 'PSP_NETWORK' // connection refused, reset, DNS, TLS
  | 'PSP_BAD_RESPONSE' // an answer that does not have the interface's shape
  | 'PSP_OUTCOME_UNKNOWN' // a purchase may or may not have been created
  | 'PSP_VALIDATION'; // refused locally before sending

export interface PspErrorDetails {
  readonly status?: number;
  readonly pspCode?: string;
  readonly pspMessage?: string;
  /** the violations an error body listed (`field_name: violation` or the sentence given) */
  readonly pspViolations?: readonly string[];
  readonly endpoint: string;
  readonly attempts?: number;
  readonly violations?: readonly Violation[];
  /** For PSP_BAD_RESPONSE: the field that did not match. */
  readonly field?: string;
  /** For PSP_OUTCOME_UNKNOWN: what the order look-up found (records exist but the answer was lost). */
  readonly found?: readonly unknown[];
  /** Retry-After of a 429/503, in ms, when given. */
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
}

/**
 * What would make a PSP error go away: refused credentials are the configuration's; a PSP that is down,
 * slow, throttling or whose answer was lost may answer later; any other refusal or malformed answer is
 * about the data sent or received.
 */
function pspErrorKind(code: PspErrorCode, status: number | undefined): ErrorKind {
  switch (code) {
    case 'PSP_TIMEOUT':
    case 'PSP_NETWORK':
    case 'PSP_OUTCOME_UNKNOWN':
      return 'unavailable';
    case 'PSP_BAD_RESPONSE':
    case 'PSP_VALIDATION':
      return 'data';
    case 'PSP_HTTP_ERROR':
      if (status === 401 || status === 403) return 'configuration';
      if (status === 429 || (status ?? 0) >= 500) return 'unavailable';
      return 'data';
  }
}

export class PspError extends ReconError {
  readonly code: PspErrorCode;
  readonly kind: ErrorKind;
  readonly status: number | undefined;
  readonly pspCode: string | undefined;
  readonly pspMessage: string | undefined;
  readonly pspViolations: readonly string[];
  readonly endpoint: string;
  readonly attempts: number;
  readonly violations: readonly Violation[];
  readonly field: string | undefined;
  readonly found: readonly unknown[] | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(code: PspErrorCode, message: string, d: PspErrorDetails) {
    super(message, d.cause === undefined ? undefined : { cause: d.cause });
    this.name = 'PspError';
    this.code = code;
    this.kind = pspErrorKind(code, d.status);
    this.status = d.status;
    this.pspCode = d.pspCode;
    this.pspMessage = d.pspMessage;
    this.pspViolations = d.pspViolations ?? [];
    this.endpoint = d.endpoint;
    this.attempts = d.attempts ?? 1;
    this.violations = d.violations ?? [];
    this.field = d.field;
    this.found = d.found;
    this.retryAfterMs = d.retryAfterMs;
  }

  /** Plain fields for logs and events. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      status: this.status,
      pspCode: this.pspCode,
      pspMessage: this.pspMessage,
      ...(this.pspViolations.length > 0 ? { pspViolations: this.pspViolations } : {}),
      endpoint: this.endpoint,
      attempts: this.attempts,
      ...(this.violations.length > 0 ? { violations: this.violations } : {}),
      ...(this.field ? { field: this.field } : {}),
    };
  }
}

export function isPspError(e: unknown, code?: PspErrorCode): e is PspError {
  return e instanceof PspError && (code === undefined || e.code === code);
}

/** Removes secret values and card-number shapes from text the PSP sent back (it may echo a request). */
export function cleanText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 3 && out.includes(s)) out = out.split(s).join('[redacted]');
  return maskPan(out).slice(0, 500);
}

import { type ErrorKind, ReconError } from '../errors';
import type { ExpectedRevision } from './types';

/** Typed store errors: callers switch on `code` (after tRPC's error codes). */
export type StoreErrorCode =
  | 'WRONG_EXPECTED_REVISION'
  | 'EVENT_ID_CONFLICT'
  | 'STORE_UNAVAILABLE'
  | 'INVALID_EVENT'
  | 'TRANSACTION_COUNTER_BEHIND'
  | 'SERVER_TOO_OLD';

/**
 * A conflicting revision is another writer's doing: running again decides. An event the store refuses as
 * invalid was built by recon itself, so it is a defect.
 */
const STORE_ERROR_KIND: Record<StoreErrorCode, ErrorKind> = {
  WRONG_EXPECTED_REVISION: 'unavailable',
  EVENT_ID_CONFLICT: 'data',
  STORE_UNAVAILABLE: 'unavailable',
  INVALID_EVENT: 'internal',
  TRANSACTION_COUNTER_BEHIND: 'configuration',
  SERVER_TOO_OLD: 'configuration',
};

export class StoreError extends ReconError {
  readonly kind: ErrorKind;
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreError';
    this.kind = STORE_ERROR_KIND[code];
  }
}

export class WrongExpectedRevisionError extends StoreError {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(
      'WRONG_EXPECTED_REVISION',
      `stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`,
    );
    this.name = 'WrongExpectedRevisionError';
  }
}

export class EventIdConflictError extends StoreError {
  constructor(
    readonly eventId: string,
    readonly stream: string,
    readonly reason: 'different_content' | 'other_stream',
    readonly existingStream: string,
  ) {
    super(
      'EVENT_ID_CONFLICT',
      reason === 'different_content'
        ? `event ${eventId} already exists in ${existingStream} with different content`
        : `event ${eventId} already exists in stream ${existingStream}, not ${stream}`,
    );
    this.name = 'EventIdConflictError';
  }
}

export class StoreUnavailableError extends StoreError {
  constructor(message: string, cause?: unknown) {
    super('STORE_UNAVAILABLE', message, { cause });
    this.name = 'StoreUnavailableError';
  }
}

/**
 * PostgreSQL backend: the server's next transaction id is not above the last stored event's (a database
 * restored from a logical dump into another server), so an append would sort before stored events and
 * readers would skip it. Nothing is written; appends work again once `recon store advance-xid` has moved
 * the counter on (docs/store.md, "Backups and restores").
 */
export class TransactionCounterBehindError extends StoreError {
  constructor(message: string, cause?: unknown) {
    super('TRANSACTION_COUNTER_BEHIND', message, { cause });
    this.name = 'TransactionCounterBehindError';
  }
}

export class InvalidEventError extends StoreError {
  constructor(message: string) {
    super('INVALID_EVENT', message);
    this.name = 'InvalidEventError';
  }
}

export function isStoreError(e: unknown, code?: StoreErrorCode): e is StoreError {
  return e instanceof StoreError && (code === undefined || e.code === code);
}

/** Whether a stream at revision `actual` (-1: no stream) meets the expectation. */
export function meetsExpected(expected: ExpectedRevision, actual: number): boolean {
  return (
    expected === 'any' ||
    (expected === 'no_stream' && actual === -1) ||
    (expected === 'stream_exists' && actual >= 0) ||
    (typeof expected === 'number' && expected === actual)
  );
}

export function checkExpected(stream: string, expected: ExpectedRevision, actual: number): void {
  if (!meetsExpected(expected, actual))
    throw new WrongExpectedRevisionError(stream, expected, actual < 0 ? 'no_stream' : actual);
}

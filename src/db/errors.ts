import { ReconError } from '../errors';

/**
 * PostgreSQL errors named by SQLSTATE, so that code says what it handles instead of comparing
 * magic strings (after drizzle-orm's approach).
 */
export const SqlState = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
  notNullViolation: '23502',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  lockNotAvailable: '55P03',
  queryCanceled: '57014',
  adminShutdown: '57P01',
  crashShutdown: '57P02',
  cannotConnectNow: '57P03',
  tooManyConnections: '53300',
  undefinedTable: '42P01',
  undefinedColumn: '42703',
  duplicateDatabase: '42P04',
  duplicateObject: '42710',
  insufficientPrivilege: '42501',
  readOnlyTransaction: '25006',
  /** recon's own (migration 0600): the event store refuses appends, the server's transaction counter is behind its events */
  transactionCounterBehind: 'RE001',
} as const;

export type SqlStateName = keyof typeof SqlState;

export function sqlStateOf(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'code' in error && typeof (error as { code: unknown }).code === 'string') {
    return (error as { code: string }).code;
  }
  return undefined;
}

export function isSqlState(error: unknown, name: SqlStateName): boolean {
  return sqlStateOf(error) === SqlState[name];
}

/** The constraint a PostgreSQL error names, when it names one. */
export function constraintOf(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'constraint_name' in error)
    return String((error as { constraint_name: unknown }).constraint_name);
  return undefined;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  SqlState.adminShutdown,
  SqlState.crashShutdown,
  SqlState.cannotConnectNow,
  SqlState.tooManyConnections,
]);

/** True when the database could not be reached or went away: the caller may retry later (HTTP 503). */
export function isConnectionError(error: unknown): boolean {
  const code = sqlStateOf(error);
  if (code !== undefined && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  if (
    error &&
    typeof error === 'object' &&
    'errno' in error &&
    CONNECTION_CODES.has(String((error as { errno: unknown }).errno))
  )
    return true;
  return false;
}

/** The database could not be reached or went away; trying again later may work. */
export class DatabaseUnavailableError extends ReconError {
  readonly code = 'DATABASE_UNAVAILABLE';
  readonly kind = 'unavailable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * The database's setup refuses to go on until an operator acts: a data directory the embedded server cannot
 * use, a password file that no longer fits its cluster, a migration changed after it was applied.
 */
export class DatabaseSetupError extends ReconError {
  readonly code = 'DATABASE_SETUP';
  readonly kind = 'configuration';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseSetupError';
  }
}

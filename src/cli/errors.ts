import { DatabaseUnavailableError, isConnectionError } from '../db/errors';
import { type ErrorKind, isReconError, ReconError } from '../errors';

/** The command as typed cannot run: an option or argument named in the message. */
export class UsageError extends ReconError {
  readonly kind = 'usage';
  constructor(
    message: string,
    readonly code: string = 'USAGE',
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A command needs a part of the configuration that is not set (a PSP project, the mail server). */
export class NotConfigured extends ReconError {
  readonly code = 'NOT_CONFIGURED';
  readonly kind = 'configuration';
}

/** An input file (orders, fee contract, sub-merchants, bank statements) refused whole, naming its problems. */
export class InputRefused extends ReconError {
  readonly kind = 'data';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'InputRefused';
  }
}

/** A port recon was told to listen on (`--port`) is taken or not allowed. */
export class PortRefused extends ReconError {
  readonly code = 'PORT_UNAVAILABLE';
  readonly kind = 'configuration';
}

function isListenError(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && (e as NodeJS.ErrnoException).syscall === 'listen';
}

/** Anything that reached the command line without being one of recon's errors: a defect of recon. */
export class UnexpectedError extends ReconError {
  readonly code = 'INTERNAL';
  readonly kind = 'internal';
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'UnexpectedError';
  }
}

/**
 * The exit code of each kind (README.md, "Exit codes"). Usage keeps 2, as shells and commander use it; the
 * others are sysexits.h's, so a supervisor can tell "try again later" (69) from "fix something" (64-78).
 * 1 stays what it is for commands that ran: some items failed (sync windows, heal requests, mails), or
 * nothing was found.
 */
export const EXIT_CODE: Readonly<Record<ErrorKind, number>> = {
  usage: 2,
  data: 65,
  internal: 70,
  unavailable: 69,
  configuration: 78,
  // 128 + SIGINT, as a shell reports a command stopped by Ctrl-C (and as a second signal exits at once)
  interrupted: 130,
};

function causeOf(e: unknown): unknown {
  return e && typeof e === 'object' && 'cause' in e ? (e as { cause: unknown }).cause : undefined;
}

/**
 * The error as one of recon's, for the command line to show. An error of recon that knows no better than
 * "internal" (a projection's batch that failed) takes the kind of what caused it, so a database that went
 * away mid-run still reads as unavailable; a bare driver error of a lost connection is the database's.
 */
export function asReconError(e: unknown): { error: ReconError; kind: ErrorKind } {
  const error = isReconError(e)
    ? e
    : isConnectionError(e)
      ? new DatabaseUnavailableError(`the database cannot be reached: ${messageOf(e)}`, { cause: e })
      : isListenError(e)
        ? new PortRefused(`cannot listen: ${e.message}`, { cause: e })
        : new UnexpectedError(e);
  if (error.kind !== 'internal') return { error, kind: error.kind };
  for (let c = causeOf(error), depth = 0; c !== undefined && depth < 8; c = causeOf(c), depth++) {
    if (isReconError(c) && c.kind !== 'internal') return { error, kind: c.kind };
    if (isConnectionError(c)) return { error, kind: 'unavailable' };
  }
  return { error, kind: 'internal' };
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The base of every error recon shows to a person. Each layer keeps its own error module (src/psp/errors.ts,
 * src/store/errors.ts, ...) whose classes extend this one, so that whoever catches an error can tell by its
 * `kind` what would make it go away, and by its `code` which refusal it is, without parsing the message.
 *
 * `code` is stable (UPPER_SNAKE, scripts and operators match on it); the message may be reworded.
 */

/**
 * What would make the error go away:
 * - usage: the command as typed (an option, an argument);
 * - configuration: the environment, the project file, or the setup (a database restored without its read models);
 * - unavailable: a service recon needs (database, event store, PSP) is down or busy; trying again later may work;
 * - data: an input (a file, a PSP answer, the events) that recon refuses, named with its place;
 * - interrupted: stopped by a signal before it finished, with nothing half-applied: run it again;
 * - internal: none of the above; a defect of recon.
 */
export type ErrorKind = 'usage' | 'configuration' | 'unavailable' | 'data' | 'interrupted' | 'internal';

export const ERROR_KINDS: readonly ErrorKind[] = [
  'usage',
  'configuration',
  'unavailable',
  'data',
  'interrupted',
  'internal',
];

export abstract class ReconError extends Error {
  abstract readonly code: string;
  abstract readonly kind: ErrorKind;
}

/** The reason a command's work is aborted with on SIGINT/SIGTERM, and what a wait it cut short throws. */
export class Interrupted extends ReconError {
  readonly code = 'INTERRUPTED';
  readonly kind = 'interrupted';
  constructor(message: string) {
    super(message);
    this.name = 'Interrupted';
  }
}

export function isReconError(e: unknown, kind?: ErrorKind): e is ReconError {
  return e instanceof ReconError && (kind === undefined || e.kind === kind);
}

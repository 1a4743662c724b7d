/**
 * Output to a reader that may be slower than recon, or may go away (`recon discrepancies | head`,
 * `recon project 2>&1 | head`), or to a place that fails (`> /dev/full`). A reader that leaves is what
 * SIGPIPE tells a Unix filter: nothing more is written, the command is stopped as by Ctrl-C (every command's
 * own SIGINT handling: its transaction rolled back, its embedded database stopped, its spool removed) and it
 * ends with 141 (128 + SIGPIPE), as a filter killed by it does. A failed write (a full disk) stops it the same
 * way and ends it with 74 (EX_IOERR). What the reader took before it left is not known to recon: output that
 * fitted in the pipe when the reader left is written whole as far as recon can tell.
 */

import { ReconError } from '../errors';

/** The status of a command whose reader left before it finished writing: 128 + SIGPIPE, as a shell shows it. */
export const EXIT_READER_LEFT = 141;
/** The status of a command whose output could not be written (sysexits.h EX_IOERR). */
export const EXIT_OUTPUT_FAILED = 74;

let readerLeft = false;
let failed: NodeJS.ErrnoException | null = null;

/** The reader of stdout went away: nothing more is written, and nothing is wrong with recon (exit 141). */
export class StdoutClosed extends ReconError {
  readonly code = 'READER_LEFT';
  readonly kind = 'interrupted';
  constructor() {
    super('stdout closed by its reader');
    this.name = 'StdoutClosed';
  }
}

/** Whether a reader of stdout or stderr has left. */
export const readerHasLeft = (): boolean => readerLeft;

/** The error that stopped stdout or stderr other than a reader leaving (ENOSPC), if one did. */
export const outputFailure = (): NodeJS.ErrnoException | null => failed;

/**
 * For every command (main): the first error of stdout or stderr is taken as a signal, raised once through the
 * process's SIGINT listeners (withRuntime, the demo, the worker and the sandbox each stop on it); later
 * writes find the stream destroyed and go nowhere.
 */
export function outputMayBeCutShort(): void {
  const onError = (e: NodeJS.ErrnoException) => {
    if (readerLeft || failed) return;
    if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') readerLeft = true;
    else failed = e;
    process.emit('SIGINT', readerLeft ? 'SIGPIPE' : 'SIGINT');
  };
  process.stdout.on('error', onError);
  process.stderr.on('error', onError);
}

/**
 * Resolves once what was written to stdout has been handed to the reader, or the reader has left (a pipe's
 * writes end asynchronously, so a reader can leave after the command's last write returned).
 */
export function stdoutFlushed(): Promise<void> {
  if (readerLeft || failed || process.stdout.destroyed) return Promise.resolve();
  return new Promise((resolve) => process.stdout.write('', () => resolve()));
}

/**
 * A writer to stdout that waits while its buffer is full, throws StdoutClosed once the reader has gone, and
 * stops waiting when `signal` aborts (Ctrl-C while a reader does not read).
 */
export function stdoutWriter(signal?: AbortSignal): (chunk: string | Uint8Array) => Promise<void> | undefined {
  const gone = () => readerLeft || failed !== null || process.stdout.destroyed;
  return (chunk) => {
    signal?.throwIfAborted();
    if (gone()) throw new StdoutClosed();
    if (process.stdout.write(chunk)) return undefined;
    return new Promise((resolve, reject) => {
      const settle = () => {
        process.stdout.off('drain', settle);
        process.stdout.off('close', settle);
        signal?.removeEventListener('abort', settle);
        if (signal?.aborted) reject(signal.reason);
        else if (gone()) reject(new StdoutClosed());
        else resolve();
      };
      process.stdout.once('drain', settle);
      process.stdout.once('close', settle);
      signal?.addEventListener('abort', settle, { once: true });
    });
  };
}

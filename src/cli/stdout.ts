/**
 * Output to a reader that may be slower than recon, or may go away (`recon discrepancies | head`,
 * `recon project 2>&1 | head`). A reader that leaves is what SIGPIPE tells a Unix filter: nothing more is
 * written, the command is asked to stop as by a signal (its embedded database stopped, its transaction rolled
 * back), and it ends with 141 (128 + SIGPIPE), as a filter killed by it does, so a truncated payment file is
 * never taken for a whole one under `set -o pipefail`.
 */

/** The status of a command whose reader left before it finished writing: 128 + SIGPIPE, as a shell shows it. */
export const EXIT_READER_LEFT = 141;

let readerLeft = false;
const listeners = new Set<() => void>();

/** The reader of stdout went away: nothing more is written, and nothing is wrong with recon. */
export class StdoutClosed extends Error {
  constructor() {
    super('stdout closed by its reader');
    this.name = 'StdoutClosed';
  }
}

/** Whether a reader of stdout or stderr has left. */
export const readerHasLeft = (): boolean => readerLeft;

/** Calls `stop` when a reader leaves (at once if one has); returns how to stop listening. */
export function onReaderLeft(stop: () => void): () => void {
  if (readerLeft) stop();
  listeners.add(stop);
  return () => listeners.delete(stop);
}

/**
 * For every command (main): an EPIPE on stdout or stderr marks the reader gone and tells the listeners
 * (withRuntime aborts its command); later writes find the stream destroyed and go nowhere. Any other error of
 * those streams (a full disk under `> file`) stays as fatal as without a listener.
 */
export function outputMayBeCutShort(): void {
  const onError = (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
    if (readerLeft) return;
    readerLeft = true;
    for (const stop of listeners) stop();
  };
  process.stdout.on('error', onError);
  process.stderr.on('error', onError);
}

/** A writer to stdout that waits while its buffer is full and throws StdoutClosed once the reader has gone. */
export function stdoutWriter(): (chunk: string | Uint8Array) => Promise<void> | undefined {
  return (chunk) => {
    if (readerLeft || process.stdout.destroyed) throw new StdoutClosed();
    if (process.stdout.write(chunk)) return undefined;
    return new Promise((resolve, reject) => {
      const settle = () => {
        process.stdout.off('drain', settle);
        process.stdout.off('close', settle);
        if (readerLeft || process.stdout.destroyed) reject(new StdoutClosed());
        else resolve();
      };
      process.stdout.once('drain', settle);
      process.stdout.once('close', settle);
    });
  };
}

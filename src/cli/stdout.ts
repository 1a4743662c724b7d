/**
 * Output written as it is made (a list of a million rows), to a reader that may be slower, or may go away
 * (`recon discrepancies | head`): then the writing stops, quietly, as a Unix filter's does.
 */

/** The reader of stdout went away: nothing more is written, and nothing is wrong. */
export class StdoutClosed extends Error {
  constructor() {
    super('stdout closed by its reader');
    this.name = 'StdoutClosed';
  }
}

/** A writer to stdout that waits while its buffer is full and throws StdoutClosed once the reader has gone. */
export function stdoutWriter(): { write: (text: string) => Promise<void> | undefined; done: () => void } {
  let closed = false;
  // any other error of stdout is as fatal as without this listener
  const onError = (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    closed = true;
  };
  process.stdout.on('error', onError);
  const write = (text: string): Promise<void> | undefined => {
    if (closed) throw new StdoutClosed();
    if (process.stdout.write(text)) return undefined;
    return new Promise((resolve, reject) => {
      const settle = () => {
        process.stdout.off('drain', settle);
        process.stdout.off('error', settle);
        // the error listener above has run first (it was added first)
        if (closed) reject(new StdoutClosed());
        else resolve();
      };
      process.stdout.once('drain', settle);
      process.stdout.once('error', settle);
    });
  };
  // once closed, the listener stays: a write already under way may still report the reader's going
  return { write, done: () => (closed ? undefined : process.stdout.off('error', onError)) };
}

/**
 * For every command: a reader of stdout that goes away (`recon payouts | head`) is not an error of recon. What
 * is left to write goes nowhere and the command ends as it would have, its embedded database stopped: without
 * this, the EPIPE reached the process's last handler, which exits at once (status 1, the database left running).
 */
export function outputMayBeCutShort(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    // a write after the reader left finds the stream destroyed
    if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') return;
    throw e;
  });
}

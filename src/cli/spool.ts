import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';

/**
 * Output made whole before any of it is shown: written to a file of its own (0600, in a new 0700 directory
 * of the system's temp), then copied to stdout at the reader's pace. A list read in one snapshot of the
 * views is so read as fast as the database gives it, and the snapshot (with its locks, which a projection
 * going live waits for) is not held while a person pages through it; an error while reading shows nothing.
 * The file is removed however the command ends.
 */
export interface Spool {
  write(text: string): Promise<void> | undefined;
  /** Closes the file and copies it to `out`, a chunk at a time. */
  copyTo(out: (chunk: Uint8Array) => Promise<void> | undefined): Promise<void>;
  remove(): void;
}

export function openSpool(): Spool {
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-list-'));
  const file = path.join(dir, 'list');
  // also when the process ends at once (a second Ctrl-C, a forced exit), where no finally runs
  const removeNow = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeNow);
  const stream = createWriteStream(file, { mode: 0o600 });
  const failed = once(stream, 'error').then(([e]) => Promise.reject(e as Error));
  failed.catch(() => undefined);
  return {
    write: (text) => (stream.write(text) ? undefined : Promise.race([once(stream, 'drain').then(() => {}), failed])),
    async copyTo(out) {
      await Promise.race([new Promise<void>((resolve) => stream.end(resolve)), failed]);
      for await (const chunk of createReadStream(file)) await out(chunk as Buffer);
    },
    remove() {
      stream.destroy();
      removeNow();
      process.off('exit', removeNow);
    },
  };
}

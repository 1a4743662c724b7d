import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

/**
 * An exclusive lock file (O_EXCL) holding the owner's pid. A lock whose owner has died is taken over,
 * so a killed process never blocks the next one.
 */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      const owner = Number(text);
      // An empty file is a lock being taken right now (pid not written yet): not stale.
      if (text !== '' && !ownerAlive(owner)) {
        try {
          unlinkSync(file);
        } catch {
          /* another process took it over first */
        }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for lock ${file} held by pid ${owner}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  try {
    return await fn();
  } finally {
    try {
      unlinkSync(file);
    } catch {
      /* already gone */
    }
  }
}

function ownerAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

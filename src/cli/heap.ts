import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection at a boundary where what the work before left is garbage (a stage of the month).
 * V8 sets the heap size at which it next collects in full from what was live at its last full collection;
 * after a stage that held a large live heap (the projections' batches), the next one (the statements) would
 * grow to that size in garbage before it is collected, and the month's peak RSS is that garbage
 * (docs/scale.md, "Statements' memory, seventh session"). Collecting at the boundary starts the next stage
 * from what is live. The collector is reached without `--expose-gc` on the command line: the flag set at run
 * time gives new contexts a `gc` function. Returns whether it ran.
 */

let gc: (() => void) | null | undefined;

export function collectGarbage(): boolean {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      const found: unknown = runInNewContext('typeof gc === "function" ? gc : null');
      gc = typeof found === 'function' ? (found as () => void) : null;
    } catch {
      gc = null;
    }
  }
  if (!gc) return false;
  gc();
  return true;
}

import { ReconError } from '../errors';
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

export class OutputDirectoryError extends ReconError {
  readonly kind = 'usage';
  readonly code = 'EXPORT_OUT_DIR_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'OutputDirectoryError';
  }
}

/**
 * The directory a workbook is written to, made when missing and checked writable before anything is read
 * or written. Made one level at a time: Node's `mkdirSync(…, { recursive: true })` loops forever in its
 * native code where mkdir answers ENOENT under a parent that exists (/proc, /sys), a loop no signal ends.
 * `name` is what the user gave it as (`--out`, `RECON_OUT_DIR`), so that every refusal names it.
 */
export function ensureOutDir(dir: string, name = 'output directory'): string {
  const target = path.resolve(dir);
  const missing: string[] = [];
  let at = target;
  for (;;) {
    const st = statOrNull(at);
    if (st) {
      if (!st.isDirectory()) {
        const what = at === target ? `${target} is a file, not a directory` : `${at} (in ${target}) is not a directory`;
        throw new OutputDirectoryError(`${name}: ${what}`);
      }
      break;
    }
    missing.unshift(at);
    const parent = path.dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && statOrNull(d)?.isDirectory()) continue;
      throw new OutputDirectoryError(`${name}: cannot create the directory ${d} (${code ?? e})`);
    }
  }
  try {
    accessSync(target, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw new OutputDirectoryError(`${name}: cannot write in ${target} (${(e as NodeJS.ErrnoException).code ?? e})`);
  }
  return target;
}

function statOrNull(p: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

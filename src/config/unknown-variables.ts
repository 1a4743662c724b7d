import { VARIABLES } from './env';
import { jsonFileText } from './json-file';

/**
 * RECON_* variables set but read by nothing: a misspelt one (RECON_TIMEZON) leaves its default in force without a
 * word. Warned of, never refused: another program of the deployment may share the prefix, and a variable the
 * project file names as "env:NAME" is read through it.
 */

/** Variables recon reads that are not settings of a deployment (tests', the build cache's: docs/testing.md). */
const INTERNAL = ['RECON_TEST_POISON_FILE', 'RECON_BUILD_MARK_EVERY_MS'];

/** Every "env:NAME" of the project file, wherever it is written; none when it cannot be read. */
function envReferences(configFile: string | undefined): Set<string> {
  const out = new Set<string>();
  if (configFile === undefined) return out;
  const walk = (v: unknown): void => {
    if (typeof v === 'string' && v.startsWith('env:')) out.add(v.slice(4));
    else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  try {
    walk(JSON.parse(jsonFileText(configFile)));
  } catch {
    // an unreadable file is the configuration's problem, reported by its reader
  }
  return out;
}

/** Edits (insert, delete, replace) from one name to another, for "did you mean". */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** One line per RECON_* variable set (not blank) that recon does not read, with the nearest documented name. */
export function unknownVariableWarnings(env: NodeJS.ProcessEnv): string[] {
  const known = VARIABLES.map((v) => v.name).filter((n) => n.startsWith('RECON_'));
  const configFile = env.RECON_CONFIG?.trim() || undefined;
  const read = new Set([...known, ...INTERNAL, ...envReferences(configFile)]);
  return Object.keys(env)
    .filter((n) => n.startsWith('RECON_') && !read.has(n) && (env[n] ?? '').trim() !== '')
    .sort()
    .map((n) => {
      const near = known.map((k) => ({ k, d: distance(n, k) })).sort((x, y) => x.d - y.d)[0];
      const hint = near && near.d <= 3 ? ` (did you mean ${near.k}?)` : '';
      return `${n}: set, but recon reads no such variable${hint}; it has no effect`;
    });
}

import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { moduleUrl } from '../source-module';
import type { Projection } from './projection';
import type { RunnerDeps } from './runner-types';
import { withTestPoison } from './test-poison';

export const PROJECTIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../projections');

let loaded: Promise<Projection[]> | undefined;

/** Every projections/*.ts exporting `projection`, sorted by file name (new files need no registration). */
export function loadProjections(dir: string = PROJECTIONS_DIR): Promise<Projection[]> {
  if (dir === PROJECTIONS_DIR && loaded) return loaded;
  const p = (async () => {
    const files = readdirSync(dir)
      .filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
      .sort();
    const out: Projection[] = [];
    const names = new Set<string>();
    for (const f of files) {
      const mod = (await import(moduleUrl(pathToFileURL(path.join(dir, f)).href))) as { projection?: Projection };
      if (!mod.projection) continue;
      if (names.has(mod.projection.name)) throw new Error(`two projections are named ${mod.projection.name} (${f})`);
      if (!/^[a-z][a-z0-9_]{0,30}$/.test(mod.projection.name))
        throw new Error(`projection name ${JSON.stringify(mod.projection.name)} (${f}) must be lower-case snake_case`);
      names.add(mod.projection.name);
      out.push(mod.projection);
    }
    return withTestPoison(out);
  })();
  if (dir === PROJECTIONS_DIR) loaded = p;
  return p;
}

/** The deps' projections (default: every one of projections/), only `names` when given. */
export async function selectProjections(deps: RunnerDeps, names?: readonly string[]): Promise<Projection[]> {
  const all = deps.projections ? [...deps.projections] : await loadProjections();
  if (!names || names.length === 0) return all;
  const unknown = names.filter((n) => !all.some((p) => p.name === n));
  if (unknown.length)
    throw new Error(
      `unknown projection${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (known: ${all.map((p) => p.name).join(', ') || 'none'})`,
    );
  return all.filter((p) => names.includes(p.name));
}

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The worker reads from the PSP and never pays: nothing the worker runs (start, sync, heal, serve, the jobs
 * and their commands) reaches src/psp/purchase-client.ts through its imports, type imports included. The
 * purchase client is the demo's and the tests' (docs/architecture.md, src/psp).
 */

const ROOT = path.resolve(__dirname, '../..');
const PURCHASE_CLIENT = 'src/psp/purchase-client.ts';

const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*'(\.[^']+)'/g;

function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!));
    return target.endsWith('.ts') ? target : `${target}.ts`;
  });
}

/** The files `entry` reaches, each with the chain of imports that reaches it. */
function reached(entry: string): Map<string, string[]> {
  const trail = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  while (queue.length > 0) {
    const f = queue.shift()!;
    for (const t of importsOf(f)) {
      if (trail.has(t) || !existsSync(path.join(ROOT, t))) continue;
      trail.set(t, [...trail.get(f)!, t]);
      queue.push(t);
    }
  }
  return trail;
}

const WORKER = [
  ...['start', 'sync', 'heal', 'serve', 'run', 'jobs', 'project'].map((c) => `src/cli/commands/${c}.ts`),
  'src/cli/worker.ts',
  'src/ingest/sync.ts',
  'src/ingest/heal.ts',
  ...readdirSync(path.join(ROOT, 'jobs'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `jobs/${f}`),
];

describe('the worker reads from the PSP and never pays', () => {
  it('reaches the reading client and not the purchase client', () => {
    const paying: string[] = [];
    let reads = false;
    for (const entry of WORKER) {
      const r = reached(entry);
      if (r.has('src/psp/client.ts')) reads = true;
      const chain = r.get(PURCHASE_CLIENT);
      if (chain) paying.push(chain.join(' → '));
    }
    expect(paying).toEqual([]);
    // the walk follows imports: the sync reaches the reading client
    expect(reads).toBe(true);
  });

  it('is a rule the walk can break: the demo reaches the purchase client', () => {
    expect(reached('src/cli/commands/demo.ts').has(PURCHASE_CLIENT)).toBe(true);
  });
});

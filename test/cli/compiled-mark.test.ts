import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { reconIn, treeCopies } from './tree-copy';

/**
 * A build of the compiled copy (bin/sources.mjs) no start has used for a day is removed when a new build is
 * made. A process running from a build (a worker left running for weeks, which imports some modules late)
 * marks its build used while it runs, so that no other start removes it under it. The mark's interval is an
 * hour; RECON_BUILD_MARK_EVERY_MS shortens it here so the marks can be watched.
 */

const trees = treeCopies();
afterAll(() => trees.remove());

const cache = (tree: string) => path.join(tree, 'node_modules/.cache/recon');
const builds = (tree: string) => readdirSync(cache(tree)).sort();
const DAYS_AGO = (n: number) => new Date(Date.now() - n * 24 * 3600 * 1000);
const age = (dir: string) => Date.now() - statSync(dir).mtimeMs;

/** A process that imports a read model from the tree's compiled copy and stays until killed. */
function runningFrom(tree: string, everyMs: number) {
  const model = pathToFileURL(path.join(tree, 'projections/bank.ts')).href;
  const sources = pathToFileURL(path.join(tree, 'bin/sources.mjs')).href;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { importSource } = await import(${JSON.stringify(sources)});
       await importSource(${JSON.stringify(model)});
       process.stdout.write('ready\\n');
       setInterval(() => {}, 1000);`,
    ],
    {
      cwd: tree,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RECON_BUILD_MARK_EVERY_MS: String(everyMs) },
    },
  );
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`the process ended (${code}) before it was ready`)));
  });
  return { ready, stop: () => child.kill('SIGKILL') };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** Changes the tree's sources, so that the next start makes a new build (and removes the unused ones). */
function editSources(tree: string, version: string): void {
  const main = path.join(tree, 'src/cli/main.ts');
  writeFileSync(main, readFileSync(main, 'utf8').replace(/\.version\('[^']*'\)/, `.version('${version}')`));
}

describe('a build of the compiled copy in use', () => {
  it('is marked used while a process runs from it, so a new build does not remove it; an unused one is removed', async () => {
    const tree = trees.make();
    expect((await reconIn(tree, ['--version'])).stdout).toBe('0.1.0\n');
    const [inUse] = builds(tree);
    const dir = path.join(cache(tree), inUse!);

    const worker = runningFrom(tree, 200);
    try {
      await worker.ready;
      // as though no start had used it for three days
      utimesSync(dir, DAYS_AGO(3), DAYS_AGO(3));
      expect(age(dir)).toBeGreaterThan(2 * 24 * 3600 * 1000);
      expect(await until(() => age(dir) < 60_000, 10_000)).toBe(true);

      // a start after an edit makes a new build and removes what is unused: not the build in use
      editSources(tree, '0.1.0-second');
      utimesSync(dir, DAYS_AGO(3), DAYS_AGO(3));
      await until(() => age(dir) < 60_000, 10_000);
      expect((await reconIn(tree, ['--version'])).stdout).toBe('0.1.0-second\n');
      expect(builds(tree)).toHaveLength(2);
      expect(builds(tree)).toContain(inUse);
    } finally {
      worker.stop();
    }

    // with no process running from it, a build unused for three days is removed by the next new build
    const [second] = builds(tree).filter((b) => b !== inUse);
    utimesSync(dir, DAYS_AGO(3), DAYS_AGO(3));
    editSources(tree, '0.1.0-third');
    expect((await reconIn(tree, ['--version'])).stdout).toBe('0.1.0-third\n');
    const after = builds(tree);
    expect(after).not.toContain(inUse);
    expect(after).toContain(second);
    expect(after).toHaveLength(2);
  }, 180_000);
});

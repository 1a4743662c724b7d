import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * bin/recon.mjs runs a copy of the sources compiled into node_modules/.cache/recon on the first start after
 * a change, or tsx when it cannot make one. Each test runs the real binary in a copy of the tree of its own
 * (its own node_modules/.cache; the packages are links to this tree's), starting with no compiled copy.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const trees: string[] = [];

afterAll(() => {
  for (const t of trees) rmSync(t, { recursive: true, force: true });
});

function copyTree(): string {
  const tree = mkdtempSync(path.join(tmpdir(), 'recon-tree-'));
  trees.push(tree);
  for (const f of ['bin', 'src', 'projections', 'jobs', 'package.json', 'tsconfig.json'])
    cpSync(path.join(ROOT, f), path.join(tree, f), { recursive: true });
  mkdirSync(path.join(tree, 'node_modules'));
  for (const name of readdirSync(path.join(ROOT, 'node_modules')).filter((n) => !n.startsWith('.')))
    symlinkSync(path.join(ROOT, 'node_modules', name), path.join(tree, 'node_modules', name));
  return tree;
}

function recon(tree: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(tree, 'bin/recon.mjs'), ...args], {
      cwd: tree,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const cache = (tree: string) => path.join(tree, 'node_modules/.cache/recon');
const builds = (tree: string) => (existsSync(cache(tree)) ? readdirSync(cache(tree)).sort() : []);

describe('the compiled copy of the sources', () => {
  it('is built by the first start of a fresh tree, and later starts run it without tsx', async () => {
    const tree = copyTree();
    expect(builds(tree)).toEqual([]);
    const first = await recon(tree, ['--version']);
    expect(first).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    const [build, ...others] = builds(tree);
    expect(others).toEqual([]);
    expect(existsSync(path.join(cache(tree), build!, 'src/cli/main.js'))).toBe(true);
    // Without tsx the sources could not run: the start that follows runs the compiled copy.
    rmSync(path.join(tree, 'node_modules/tsx'));
    const again = await recon(tree, ['exceptions', '--help']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Usage: recon exceptions');
    expect(again.stderr).toBe('');
    expect(builds(tree)).toEqual([build]);
  }, 120_000);

  it('is built anew on the start after a source file changed: no start runs what was there before', async () => {
    const tree = copyTree();
    expect((await recon(tree, ['--version'])).stdout).toBe('0.1.0\n');
    const [before] = builds(tree);
    const main = path.join(tree, 'src/cli/main.ts');
    writeFileSync(main, readFileSync(main, 'utf8').replace(".version('0.1.0')", ".version('0.1.0-edited')"));
    expect(await recon(tree, ['--version'])).toEqual({ code: 0, stdout: '0.1.0-edited\n', stderr: '' });
    const after = builds(tree);
    expect(after).toHaveLength(2);
    expect(after).toContain(before);
    // Back to the first content: the first build's name again, not a third build.
    writeFileSync(main, readFileSync(main, 'utf8').replace(".version('0.1.0-edited')", ".version('0.1.0')"));
    expect((await recon(tree, ['--version'])).stdout).toBe('0.1.0\n');
    expect(builds(tree)).toEqual(after);
  }, 180_000);

  it('is built once when two starts race to build it, and both run', async () => {
    const tree = copyTree();
    const both = await Promise.all([recon(tree, ['--version']), recon(tree, ['exceptions', '--help'])]);
    expect(both[0]).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    expect(both[1].code).toBe(0);
    expect(both[1].stdout).toContain('Usage: recon exceptions');
    expect(both[1].stderr).toBe('');
    // One build in place, no temporary directory left behind by the start whose rename lost.
    expect(builds(tree)).toHaveLength(1);
  }, 120_000);

  it('cannot be made when its directory cannot be written: the start runs the sources through tsx, quietly', async () => {
    const tree = copyTree();
    writeFileSync(path.join(tree, 'node_modules/.cache'), 'a file where the cache directory would be\n');
    const r = await recon(tree, ['exceptions', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: recon exceptions');
    expect(r.stderr).toBe('');
  }, 120_000);

  it('is not used where node_modules/.cache is a link out of the tree (packages would be found there): tsx runs the sources', async () => {
    const tree = copyTree();
    const elsewhere = mkdtempSync(path.join(tmpdir(), 'recon-cache-elsewhere-'));
    trees.push(elsewhere);
    mkdirSync(path.join(elsewhere, '.cache'));
    symlinkSync(path.join(elsewhere, '.cache'), path.join(tree, 'node_modules/.cache'));
    const r = await recon(tree, ['exceptions', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: recon exceptions');
    expect(r.stderr).toBe('');
    expect(readdirSync(path.join(elsewhere, '.cache/recon'))).toEqual([]);
  }, 120_000);
});

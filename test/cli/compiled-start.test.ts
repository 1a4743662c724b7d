import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reconIn, treeCopies } from './tree-copy';

/**
 * bin/recon.mjs runs a copy of the sources compiled into node_modules/.cache/recon on the first start after
 * a change, or tsx when it cannot make one. Each test runs the real binary in a copy of the tree of its own
 * (its own node_modules/.cache; the packages are links to this tree's), starting with no compiled copy.
 */

const trees = treeCopies();
afterAll(() => trees.remove());

const cache = (tree: string) => path.join(tree, 'node_modules/.cache/recon');
const builds = (tree: string) => (existsSync(cache(tree)) ? readdirSync(cache(tree)).sort() : []);

describe('the compiled copy of the sources', () => {
  it('is built by the first start of a fresh tree, and later starts run it without tsx', async () => {
    const tree = trees.make();
    expect(builds(tree)).toEqual([]);
    const first = await reconIn(tree, ['--version']);
    expect(first).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    const [build, ...others] = builds(tree);
    expect(others).toEqual([]);
    expect(existsSync(path.join(cache(tree), build!, 'src/cli/main.js'))).toBe(true);
    // Without tsx the sources could not run: the start that follows runs the compiled copy.
    rmSync(path.join(tree, 'node_modules/tsx'));
    const again = await reconIn(tree, ['exceptions', '--help']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Usage: recon exceptions');
    expect(again.stderr).toBe('');
    expect(builds(tree)).toEqual([build]);
  }, 120_000);

  it('is built anew on the start after a source file changed: no start runs what was there before', async () => {
    const tree = trees.make();
    expect((await reconIn(tree, ['--version'])).stdout).toBe('0.1.0\n');
    const [before] = builds(tree);
    const main = path.join(tree, 'src/cli/main.ts');
    writeFileSync(main, readFileSync(main, 'utf8').replace(".version('0.1.0')", ".version('0.1.0-edited')"));
    expect(await reconIn(tree, ['--version'])).toEqual({ code: 0, stdout: '0.1.0-edited\n', stderr: '' });
    const after = builds(tree);
    expect(after).toHaveLength(2);
    expect(after).toContain(before);
    // Back to the first content: the first build's name again, not a third build.
    writeFileSync(main, readFileSync(main, 'utf8').replace(".version('0.1.0-edited')", ".version('0.1.0')"));
    expect((await reconIn(tree, ['--version'])).stdout).toBe('0.1.0\n');
    expect(builds(tree)).toEqual(after);
  }, 180_000);

  it('is built once when two starts race to build it, and both run', async () => {
    const tree = trees.make();
    const both = await Promise.all([reconIn(tree, ['--version']), reconIn(tree, ['exceptions', '--help'])]);
    expect(both[0]).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    expect(both[1].code).toBe(0);
    expect(both[1].stdout).toContain('Usage: recon exceptions');
    expect(both[1].stderr).toBe('');
    // One build in place, no temporary directory left behind by the start whose rename lost.
    expect(builds(tree)).toHaveLength(1);
  }, 120_000);

  it('cannot be made when its directory cannot be written: the start runs the sources through tsx, quietly', async () => {
    const tree = trees.make();
    writeFileSync(path.join(tree, 'node_modules/.cache'), 'a file where the cache directory would be\n');
    const r = await reconIn(tree, ['exceptions', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: recon exceptions');
    expect(r.stderr).toBe('');
  }, 120_000);

  it('is not used where node_modules/.cache is a link out of the tree (packages would be found there): tsx runs the sources', async () => {
    const tree = trees.make();
    const elsewhere = trees.temp('recon-cache-elsewhere-');
    mkdirSync(path.join(elsewhere, '.cache'));
    symlinkSync(path.join(elsewhere, '.cache'), path.join(tree, 'node_modules/.cache'));
    const r = await reconIn(tree, ['exceptions', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: recon exceptions');
    expect(r.stderr).toBe('');
    expect(readdirSync(path.join(elsewhere, '.cache/recon'))).toEqual([]);
  }, 120_000);
});

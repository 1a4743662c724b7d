import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * bin/sources.mjs names a build by the hash of the sources' content. Had the build read the files again, a
 * source saved in between (an editor, a `git checkout`) would be built under the name of the content before
 * it, and once restored the sources would run the edited copy on every start after; the build compiles the
 * bytes it hashed.
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

function recon(
  tree: string,
  args: string[],
  nodeArgs: string[] = [],
): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeArgs, path.join(tree, 'bin/recon.mjs'), ...args], {
      cwd: tree,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.once('close', (code) => resolve({ code, stdout }));
  });
}

// Saves an edit of src/cli/main.ts right after the start has read it to hash it, before the build compiles
// it (the window of a save during a start's build, made certain).
const EDIT_DURING_BUILD = `
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const readFileSync = fs.readFileSync;
let saved = false;
fs.readFileSync = function (p, ...rest) {
  const out = readFileSync.call(this, p, ...rest);
  if (!saved && String(p).endsWith('/src/cli/main.ts')) {
    saved = true;
    fs.writeFileSync(p, out.toString().replace(".version('0.1.0')", ".version('0.1.0-edited')"));
  }
  return out;
};
syncBuiltinESMExports();
`;

describe('the compiled copy when a source is saved during its build', () => {
  it('is never run for sources whose content it was not built from', async () => {
    const tree = copyTree();
    const main = path.join(tree, 'src/cli/main.ts');
    const original = readFileSync(main, 'utf8');
    const preload = path.join(tree, 'edit-during-build.mjs');
    writeFileSync(preload, EDIT_DURING_BUILD);
    await recon(tree, ['--version'], ['--import', preload]);
    expect(readFileSync(main, 'utf8')).toContain(".version('0.1.0-edited')");
    // the edit undone: the sources are those of before, and so must be what runs
    writeFileSync(main, original);
    expect(await recon(tree, ['--version'])).toEqual({ code: 0, stdout: '0.1.0\n' });
  }, 120_000);
});

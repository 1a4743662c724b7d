import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Copies of the tree for the tests of the binary's compiled copy (bin/sources.mjs): the sources copied, the
 * packages linked one by one to this tree's (so each copy has a node_modules/.cache of its own, starting with
 * no compiled copy), and the real binary run in one.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface TreeCopies {
  make(): string;
  /** an empty temporary directory, removed with the copies */
  temp(prefix: string): string;
  /** removes every copy made */
  remove(): void;
}

export function treeCopies(): TreeCopies {
  const trees: string[] = [];
  return {
    make() {
      const tree = mkdtempSync(path.join(tmpdir(), 'recon-tree-'));
      trees.push(tree);
      for (const f of ['bin', 'src', 'projections', 'jobs', 'package.json', 'tsconfig.json'])
        cpSync(path.join(ROOT, f), path.join(tree, f), { recursive: true });
      mkdirSync(path.join(tree, 'node_modules'));
      for (const name of readdirSync(path.join(ROOT, 'node_modules')).filter((n) => !n.startsWith('.')))
        symlinkSync(path.join(ROOT, 'node_modules', name), path.join(tree, 'node_modules', name));
      return tree;
    },
    temp(prefix) {
      const dir = mkdtempSync(path.join(tmpdir(), prefix));
      trees.push(dir);
      return dir;
    },
    remove() {
      for (const t of trees.splice(0)) rmSync(t, { recursive: true, force: true });
    },
  };
}

/** `node [nodeArgs] <tree>/bin/recon.mjs args` in the tree, with no environment but PATH and HOME. */
export function reconIn(
  tree: string,
  args: string[],
  nodeArgs: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeArgs, path.join(tree, 'bin/recon.mjs'), ...args], {
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

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reconIn, treeCopies } from './tree-copy';

/**
 * bin/sources.mjs names a build by the hash of the sources' content. Had the build read the files again, a
 * source saved in between (an editor, a `git checkout`) would be built under the name of the content before
 * it, and once restored the sources would run the edited copy on every start after; the build compiles the
 * bytes it hashed.
 */

const trees = treeCopies();
afterAll(() => trees.remove());

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
    const tree = trees.make();
    const main = path.join(tree, 'src/cli/main.ts');
    const original = readFileSync(main, 'utf8');
    const preload = path.join(tree, 'edit-during-build.mjs');
    writeFileSync(preload, EDIT_DURING_BUILD);
    await reconIn(tree, ['--version'], ['--import', preload]);
    expect(readFileSync(main, 'utf8')).toContain(".version('0.1.0-edited')");
    // the edit undone: the sources are those of before, and so must be what runs
    writeFileSync(main, original);
    const { code, stdout } = await reconIn(tree, ['--version']);
    expect({ code, stdout }).toEqual({ code: 0, stdout: '0.1.0\n' });
  }, 120_000);
});

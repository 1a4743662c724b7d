import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ReconError } from '../../src/errors';

/**
 * Every error class of src/, projections/ and jobs/ extends recon's base error (src/errors.ts), so that the
 * command line can show its code and exit with its kind. The classes are found by reading the sources: a
 * new error class is checked without being listed here.
 */

const ROOT = path.resolve(__dirname, '../..');

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(ROOT, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(ROOT, rel)).isDirectory()) out.push(...filesUnder(rel));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

const CLASS = /^(export\s+)?(?:abstract\s+)?class\s+(\w+)\s+extends\s+(\w+)/gm;

interface Declared {
  readonly file: string;
  readonly name: string;
  readonly exported: boolean;
  readonly base: string;
}

const declared: Declared[] = ['src', 'projections', 'jobs'].flatMap(filesUnder).flatMap((file) =>
  [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(CLASS)].map((m) => ({
    file,
    name: m[2]!,
    exported: m[1] !== undefined,
    base: m[3]!,
  })),
);

async function classOf(d: Declared): Promise<unknown> {
  const mod = (await import(pathToFileURL(path.join(ROOT, d.file)).href)) as Record<string, unknown>;
  return mod[d.name];
}

describe('every error class extends ReconError', () => {
  it('finds the error classes of the tree', () => {
    // the scan reads what it should: the layers' own error modules are among what it found
    expect(declared.map((d) => d.name)).toEqual(expect.arrayContaining(['StoreError', 'PspError', 'ExportError']));
  });

  it('declares no error class it does not export (an unexported one could not be checked)', () => {
    expect(declared.filter((d) => !d.exported && /Error$/.test(d.base)).map((d) => `${d.file}: ${d.name}`)).toEqual([]);
  });

  it('has every exported class that is an Error extend ReconError', async () => {
    const errors: string[] = [];
    const outside: string[] = [];
    for (const d of declared.filter((x) => x.exported)) {
      const cls = await classOf(d);
      if (typeof cls !== 'function' || cls === ReconError || !(cls.prototype instanceof Error)) continue;
      errors.push(d.name);
      if (!(cls.prototype instanceof ReconError)) outside.push(`${d.file}: ${d.name} extends ${d.base}`);
    }
    expect(outside).toEqual([]);
    expect(errors).toEqual(expect.arrayContaining(['StoreError', 'PspError', 'ExportError', 'UsageError']));
  });
});

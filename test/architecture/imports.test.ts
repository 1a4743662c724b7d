import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md's folder table is the rule: every import of src/, projections/ and jobs/ crosses only
 * from a folder to one its row lists, and no file reaches itself through its imports.
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

/** The table's rows: folder (or file) → what it may import. */
function importTable(): Map<string, Set<string>> {
  const doc = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Folders'), doc.indexOf('\n## ', doc.indexOf('## Folders') + 1));
  const rows = new Map<string, Set<string>>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const unit = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!unit) continue;
    rows.set(unit, new Set([...(cells[3] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!)));
  }
  return rows;
}

/**
 * The unit a file belongs to: its folder under src/ (or the file itself at src/'s top), projections/, jobs/;
 * or a folder within one when the table gives it a row of its own (src/reconciliation/discrepancies).
 */
function unitOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'src') return `${parts[0]}/`;
  const nested = `src/${parts[1]}/${parts[2]}`;
  if (parts.length > 3 && TABLE.has(nested)) return nested;
  return `src/${parts[1]}`;
}

const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*'(\.[^']+)'/g;

function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!));
    return target.endsWith('.ts') ? target : `${target}.ts`;
  });
}

const TABLE = importTable();
const files = ['src', 'projections', 'jobs'].flatMap(filesUnder);

describe('the imports follow docs/architecture.md', () => {
  it('lists every folder of src/, projections/ and jobs/', () => {
    const table = importTable();
    expect([...new Set(files.map(unitOf))].filter((u) => !table.has(u)).sort()).toEqual([]);
  });

  it('crosses folders only where the table allows', () => {
    const table = importTable();
    const wrong: string[] = [];
    for (const f of files) {
      for (const target of importsOf(f)) {
        const from = unitOf(f);
        const to = unitOf(target);
        if (from !== to && !table.get(from)?.has(to)) wrong.push(`${f} → ${target} (${from} may not import ${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('has no import cycle between files', () => {
    const graph = new Map(files.map((f) => [f, importsOf(f).filter((t) => files.includes(t))]));
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (f: string, trail: string[]) => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(f)), f].join(' → '));
        return;
      }
      state.set(f, 'open');
      for (const t of graph.get(f) ?? []) visit(t, [...trail, f]);
      state.set(f, 'done');
    };
    for (const f of files) visit(f, []);
    expect(cycles).toEqual([]);
  });

  it('keeps the sandbox off the read side, and bench/ and test/ apart', () => {
    // the registry of discrepancy types is a leaf the sandbox's ground truth shares (no copy of the names)
    const sandbox = filesUnder('src/sandbox')
      .flatMap(importsOf)
      .filter((t) => t !== 'src/reconciliation/discrepancies/registry.ts');
    expect(sandbox.filter((t) => /^(src\/(reconciliation|ledger|projection|export)|projections)\//.test(t))).toEqual(
      [],
    );
    expect(
      filesUnder('bench')
        .flatMap(importsOf)
        .filter((t) => t.startsWith('test/')),
    ).toEqual([]);
  });
});

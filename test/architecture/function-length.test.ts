import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No function in src/, projections/ or jobs/ is longer than 80 lines unless the doc comment above it says why
 * it stays whole (the words "stays whole"): a long function is read in named steps.
 *
 * The tree has one formatter (biome), so a function is found by its first line and ends at the first later
 * line that closes a brace at the same indentation; no parser is needed, and the scan is checked below
 * against functions of known length.
 */

const ROOT = path.resolve(__dirname, '../..');
const LIMIT = 80;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(ROOT, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(ROOT, rel)).isDirectory()) out.push(...filesUnder(rel));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** The first line of a function: a declaration, an arrow function with a body, or a method. */
const START =
  /^(\s*)(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?\s+\w+|(?:const|let)\s+\w+\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|\w+)?.*=>\s*\{$|(?:(?:public|private|static|async|get|set)\s+)*\*?\w+\s*\([^)]*\)\s*(?::\s*[^{]+)?\{$)/;
const NOT_A_FUNCTION = /^\s*(?:if|for|while|switch|catch|return|else)\b/;

interface LongFunction {
  file: string;
  line: number;
  lines: number;
  head: string;
}

/** Functions of one file's text longer than `limit` lines whose doc comment does not say why they stay whole. */
function longFunctions(file: string, text: string, limit = LIMIT): LongFunction[] {
  const lines = text.split('\n');
  const out: LongFunction[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = START.exec(lines[i]!);
    if (!m || NOT_A_FUNCTION.test(lines[i]!)) continue;
    const indent = m[1]!;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith(`${indent}}`)) end++;
    const length = end - i + 1;
    if (length <= limit || saysWhyWhole(lines, i)) continue;
    out.push({ file, line: i + 1, lines: length, head: lines[i]!.trim().slice(0, 80) });
  }
  return out;
}

/** The doc comment right above line `at` (decorations and blank lines skipped) says "stays whole". */
function saysWhyWhole(lines: readonly string[], at: number): boolean {
  let j = at - 1;
  if (j < 0 || !lines[j]!.trim().endsWith('*/')) return false;
  while (j >= 0 && !lines[j]!.trim().startsWith('/**')) {
    if (/stays whole/i.test(lines[j]!)) return true;
    j--;
  }
  return j >= 0 && /stays whole/i.test(lines[j]!);
}

describe('functions are read in named steps', () => {
  it('finds a long function, its length and where it starts, and spares one whose comment says why', () => {
    const body = Array.from({ length: 85 }, (_, k) => `  step${k}();`).join('\n');
    const text = [
      'export function long(a: number): void {',
      body,
      '}',
      '',
      '/**',
      ' * A state machine read top to bottom: it stays whole.',
      ' */',
      'export async function* whole() {',
      body,
      '}',
      'const short = () => {',
      '  return 1;',
      '};',
    ].join('\n');
    expect(longFunctions('x.ts', text)).toEqual([
      { file: 'x.ts', line: 1, lines: 87, head: 'export function long(a: number): void {' },
    ]);
  });

  it(`has no function over ${LIMIT} lines in src/, projections/ and jobs/`, () => {
    const files = ['src', 'projections', 'jobs'].flatMap(filesUnder);
    const long = files.flatMap((f) => longFunctions(f, readFileSync(path.join(ROOT, f), 'utf8')));
    expect(long.map((l) => `${l.file}:${l.line} (${l.lines} lines) ${l.head}`)).toEqual([]);
  });
});

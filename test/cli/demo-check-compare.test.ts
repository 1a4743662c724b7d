import { describe, expect, it } from 'vitest';
import { compareFindings } from '../../src/cli/demo-check';

/**
 * The demo's check counts findings against the injected ones (each key once per finding, duplicates count),
 * in time linear in the findings (a 1M month has tens of thousands): the same answer as removing each found
 * key's first match from the expected list, the way it was first written.
 */
function byRemoval(found: readonly string[], expected: readonly string[]) {
  const left = [...expected];
  const unexpected: string[] = [];
  for (const f of found) {
    const i = left.indexOf(f);
    if (i >= 0) left.splice(i, 1);
    else unexpected.push(f);
  }
  return { unexpected: unexpected.sort(), missed: left.sort() };
}

describe('compareFindings', () => {
  it('counts duplicates: a finding found twice and injected once is one match and one unexpected', () => {
    const c = compareFindings('t', ['a', 'a', 'b'], ['a', 'c', 'c']);
    expect(c).toEqual({ name: 't', passed: false, matched: 1, unexpected: ['a', 'b'], missed: ['c', 'c'] });
    expect(compareFindings('t', ['x', 'y', 'x'], ['x', 'x', 'y']).passed).toBe(true);
  });

  it('answers as removing matches one by one does, on random lists', () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    for (let round = 0; round < 300; round++) {
      const list = () => Array.from({ length: next() % 12 }, () => `k${next() % 5}`);
      const found = list();
      const expected = list();
      const c = compareFindings('t', found, expected);
      const r = byRemoval(found, expected);
      expect({ unexpected: c.unexpected, missed: c.missed }).toEqual(r);
      expect(c.matched).toBe(found.length - r.unexpected.length);
      expect(c.passed).toBe(r.unexpected.length === 0 && r.missed.length === 0);
    }
  });
});

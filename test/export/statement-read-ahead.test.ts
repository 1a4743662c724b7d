import { describe, expect, it } from 'vitest';
import { readAhead } from '../../src/export/statements/read-ahead';

/**
 * A statement's lines are read ahead of its writer (read-ahead.ts): the same items in the same order, never
 * more than the bound ahead, the source's error after the items before it, the source closed when the writer
 * stops early.
 */

/** `n` numbers, a turn of the event loop every `batch` (a cursor's round trip), noting how far it was read. */
function source(n: number, batch: number, o: { failAt?: number } = {}) {
  const seen = { read: 0, closed: false };
  async function* numbers() {
    try {
      for (let i = 0; i < n; i++) {
        if (i % batch === 0) await new Promise((r) => setImmediate(r));
        if (i === o.failAt) throw new Error(`cursor lost at ${i}`);
        seen.read = i + 1;
        yield i;
      }
    } finally {
      seen.closed = true;
    }
  }
  return { seen, items: numbers() };
}

describe('lines read ahead of the writer', () => {
  it('gives every item in order, reading ahead while the writer works, never more than the bound', async () => {
    const s = source(5_000, 100);
    const got: number[] = [];
    let mostAhead = 0;
    for await (const i of readAhead(s.items, 300)) {
      got.push(i);
      mostAhead = Math.max(mostAhead, s.seen.read - got.length);
      if (i % 250 === 0) await new Promise((r) => setImmediate(r)); // the writer yields to the zip stream
    }
    expect(got).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
    expect(mostAhead).toBeGreaterThan(0);
    // what was handed over in one take (under the bound) plus what was read while it was written
    expect(mostAhead).toBeLessThanOrEqual(600);
    expect(s.seen.closed).toBe(true);
  });

  it("throws the source's error after the items read before it", async () => {
    const s = source(1_000, 50, { failAt: 420 });
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const i of readAhead(s.items, 100)) got.push(i);
      })(),
    ).rejects.toThrow('cursor lost at 420');
    expect(got).toEqual(Array.from({ length: 420 }, (_, i) => i));
  });

  it('closes the source when the writer stops early', async () => {
    const s = source(10_000, 100);
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const i of readAhead(s.items, 200)) {
          got.push(i);
          if (i === 150) throw new Error('bridge does not tie');
        }
      })(),
    ).rejects.toThrow('bridge does not tie');
    expect(s.seen.closed).toBe(true);
    expect(s.seen.read).toBeLessThan(1_000);
  });
});

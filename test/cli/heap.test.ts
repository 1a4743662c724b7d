import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/cli/heap';

/** The demo collects the heap in full between stages (src/cli/heap.ts): the collector is reached, and frees. */
describe('a full collection between stages', () => {
  it('runs without --expose-gc on the command line and frees what nothing holds', async () => {
    let big: object[] | null = Array.from({ length: 100_000 }, (_, i) => ({ i }));
    const ref = new WeakRef(big);
    big = null;
    // a WeakRef's target is kept until the job that made it ends
    await new Promise((r) => setTimeout(r, 0));
    expect(collectGarbage()).toBe(true);
    expect(ref.deref()).toBeUndefined();
  });
});

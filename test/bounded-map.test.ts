import { describe, expect, it } from 'vitest';
import { boundedMap } from '../src/bounded-map';

describe('boundedMap', () => {
  it('keeps the items order, starts nothing after an abort and waits for the ones in flight', async () => {
    const order = await boundedMap([30, 5, 20, 1], 2, undefined, async (ms) => {
      await new Promise((r) => setTimeout(r, ms));
      return ms * 2;
    });
    expect(order).toEqual([60, 10, 40, 2]);

    const abort = new AbortController();
    const started: number[] = [];
    const finished: number[] = [];
    const run = boundedMap([0, 1, 2, 3, 4, 5], 2, abort.signal, async (i) => {
      started.push(i);
      if (i === 1) abort.abort(new Error('stopped'));
      await new Promise((r) => setTimeout(r, 10));
      finished.push(i);
      return i;
    });
    await expect(run).rejects.toThrow('stopped');
    expect(started).toEqual([0, 1]);
    expect(finished.sort()).toEqual([0, 1]);
  });

  it('throws the first error once the others in flight are done', async () => {
    const finished: number[] = [];
    const run = boundedMap([0, 1, 2], 3, undefined, async (i) => {
      if (i === 0) throw new Error('first');
      await new Promise((r) => setTimeout(r, 10));
      finished.push(i);
    });
    await expect(run).rejects.toThrow('first');
    expect(finished.sort()).toEqual([1, 2]);
  });
});

describe('boundedMap lanes', () => {
  it('gives each call a lane no other call holds at the same time', async () => {
    const busy = new Set<number>();
    const seen: number[] = [];
    await boundedMap([3, 1, 4, 1, 5, 9, 2, 6], 3, undefined, async (ms, lane) => {
      expect(busy.has(lane.index)).toBe(false);
      busy.add(lane.index);
      seen.push(lane.index);
      await new Promise((r) => setTimeout(r, ms));
      busy.delete(lane.index);
    });
    expect(new Set(seen)).toEqual(new Set([0, 1, 2]));
  });

  it('tells the calls under way that the run is stopping, and throws the abort reason before their errors', async () => {
    const abort = new AbortController();
    const stoppingAfter: boolean[] = [];
    const run = boundedMap([0, 1], 2, abort.signal, async (i, lane) => {
      if (i === 0) {
        await new Promise((r) => setTimeout(r, 1));
        abort.abort(new Error('aborted by the operator'));
        // what a worker thread ended by the abort does: its statement fails after the abort
        throw new Error('worker thread stopped');
      }
      await new Promise((r) => setTimeout(r, 10));
      stoppingAfter.push(lane.stopping());
      return i;
    });
    await expect(run).rejects.toThrow('aborted by the operator');
    expect(stoppingAfter).toEqual([true]);
  });

  it('begins nothing when the signal is aborted already', async () => {
    const abort = new AbortController();
    abort.abort(new Error('before'));
    let calls = 0;
    await expect(boundedMap([1, 2], 2, abort.signal, async () => ++calls)).rejects.toThrow('before');
    expect(calls).toBe(0);
  });
});

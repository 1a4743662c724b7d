import { describe, expect, it } from 'vitest';
import { type MonthAsk, netAsks } from '../../src/reconciliation/payouts/asks';

/** netAsks (pure): a month's asks lowered by a correction's figure, the latest first; raised back by a later one. */

const ask = (
  reference: string | null,
  payable: bigint,
  stillAsked: bigint | null = null,
  o: Partial<MonthAsk> = {},
) => ({
  subMerchantId: 'SM-A',
  currency: 'EUR',
  month: '2026-10',
  reference,
  payable,
  stillAsked,
  ...o,
});

describe('netAsks', () => {
  it('with no correction: every ask as asked, a reference asked twice counted once', () => {
    expect(netAsks([ask('R1', 100n), ask('R1', 100n), ask('R2', 0n)])).toEqual(new Map([['R1', 100n]]));
  });

  it('lowers the latest ask first, each down to zero, and drops one lowered to nothing', () => {
    expect(netAsks([ask('R1', 1000n), ask('R2', 300n, 1300n), ask(null, 0n, 800n)])).toEqual(new Map([['R1', 800n]]));
    expect(netAsks([ask('R1', 1000n), ask('R2', 300n, 1300n), ask(null, 0n, 1100n)])).toEqual(
      new Map([
        ['R1', 1000n],
        ['R2', 100n],
      ]),
    );
    expect(netAsks([ask('R1', 1000n), ask(null, 0n, 0n)])).toEqual(new Map());
  });

  it('takes the latest figure: a month stated lower, then higher again, is asked the higher', () => {
    const lower = [ask('R1', 1000n), ask(null, 0n, 600n)];
    expect(netAsks(lower).get('R1')).toBe(600n);
    expect(netAsks([...lower, ask(null, 0n, 900n)]).get('R1')).toBe(900n);
    // a figure above what was asked lowers nothing (the correction asked the difference under its own reference)
    expect(netAsks([...lower, ask(null, 0n, 900n), ask('R3', 200n, 1200n)])).toEqual(
      new Map([
        ['R1', 1000n],
        ['R3', 200n],
      ]),
    );
  });

  it('keeps sub-merchants, currencies and months apart', () => {
    const got = netAsks([
      ask('A', 100n),
      ask('B', 100n, null, { subMerchantId: 'SM-B' }),
      ask('C', 100n, null, { currency: 'UAH' }),
      ask('D', 100n, null, { month: '2026-09' }),
      ask(null, 0n, 40n),
    ]);
    expect([...got]).toEqual([
      ['A', 40n],
      ['B', 100n],
      ['C', 100n],
      ['D', 100n],
    ]);
  });

  it('never asks more in all than asked, nor than the latest figure (random months)', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let k = 0; k < 500; k++) {
      const asks: MonthAsk[] = [];
      let asked = 0n;
      let figure: bigint | null = null;
      for (let i = 0; i < 1 + rnd(6); i++) {
        const payable = BigInt(rnd(3) === 0 ? 0 : rnd(1000));
        const still = i > 0 && rnd(2) === 0 ? BigInt(rnd(2000)) : null;
        asks.push(ask(payable > 0n ? `R${i}` : null, payable, still));
        asked += payable;
        if (still !== null) figure = still;
      }
      const total = [...netAsks(asks).values()].reduce((s, v) => s + v, 0n);
      const want = figure === null || figure > asked ? asked : figure;
      expect(total).toBe(want);
      expect([...netAsks(asks).values()].every((v) => v > 0n)).toBe(true);
    }
  });
});

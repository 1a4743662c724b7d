import { describe, expect, it } from 'vitest';
import { createStreamRng } from '../../src/sandbox/random';
import { generateScenario } from '../../src/sandbox/scenario';

/**
 * A PSP never gives two orders one payment id or one transaction id. With a 32-bit generator per order the
 * sandbox did, from about 250k payments on (7 payment ids shared at 250k, 184 at 1M): recon then matched one
 * order's pending operation with the other's success, and the 1M month's money check failed by that payment.
 */
describe('the sandbox gives every order its own ids', () => {
  it('no payment id or transaction id is shared by two orders of a 250k-payment month', () => {
    const scenario = generateScenario({ seed: 'recon-demo', payments: 250_000, month: '2026-09', timezone: 'UTC' });
    const paymentOwner = new Map<string, string>();
    const transactionOwner = new Map<string, string>();
    const shared: string[] = [];
    let operations = 0;
    for (const order of scenario.orders()) {
      for (const op of order.operations) {
        operations++;
        const payment = paymentOwner.get(op.paymentId);
        if (payment === undefined) paymentOwner.set(op.paymentId, op.orderId);
        else if (payment !== op.orderId) shared.push(`payment ${op.paymentId}: ${payment} and ${op.orderId}`);
        const transaction = transactionOwner.get(op.transactionId);
        if (transaction === undefined) transactionOwner.set(op.transactionId, op.orderId);
        else if (transaction !== op.orderId)
          shared.push(`transaction ${op.transactionId}: ${transaction} and ${op.orderId}`);
      }
    }
    expect(operations).toBeGreaterThan(250_000);
    expect(shared).toEqual([]);
  });

  it('a stream generator is a pure function of its parts, and neighbouring parts give unrelated streams', () => {
    const draw = (...parts: Array<string | number>) => {
      const r = createStreamRng(...parts);
      return Array.from({ length: 8 }, () => r.next());
    };
    expect(draw('s', 'order', 7)).toEqual(draw('s', 'order', 7));
    const a = draw('s', 'order', 7);
    const b = draw('s', 'order', 8);
    // no value of one stream appears in the other: they are not shifted copies of each other
    expect(a.filter((x) => b.includes(x))).toEqual([]);
    for (const x of [...a, ...b]) expect(x >= 0 && x < 1).toBe(true);
  });

  it('a million orders of a seed (with 28 shared seeds before) start their streams apart (96 bits of seed, not 32)', () => {
    for (const seed of ['auditor-7']) {
      const starts = new Set<string>();
      for (let i = 0; i < 1_000_000; i++) {
        const r = createStreamRng(seed, 'order', i);
        starts.add(`${r.next()} ${r.next()}`);
      }
      expect(starts.size).toBe(1_000_000);
    }
  });
});

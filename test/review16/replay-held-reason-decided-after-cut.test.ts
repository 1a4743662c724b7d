import { describe, expect, it } from 'vitest';
import { DEFAULT_HOLD_POLICY } from '../../src/config/hold-policy';
import { heldAt } from '../../src/export/payouts/holds';
import { ledgerPosition } from '../../src/export/statements/issue';
import { appendAll, at, periodRow, registerRows, syncCompleted } from '../discrepancies/fixtures';
import { payholdSteps } from '../review15/payhold-support';
import { useTestStore } from '../support/db';

/**
 * What a statement cut at a position holds is what stood at that position (holds.ts `heldAt`): the amounts and
 * the reasons. A held item's reason said "(reviewed: withheld)" whenever the discrepancy's status was accepted
 * now, whatever the decision at the cut: the same cut read before and after a later decision changed its words,
 * and a decision to pay, taken after the cut, was printed as "reviewed: withheld".
 */

const fx = useTestStore();
const policy = DEFAULT_HOLD_POLICY;
const steps = payholdSteps(fx, policy);
const dateTime = at('2024-03-10T10:00:00Z');
const observedAt = at('2024-03-10T23:00:00Z');

const heldWords = async (cut: NonNullable<Awaited<ReturnType<typeof ledgerPosition>>>) =>
  ((await heldAt(fx.db.sql, fx.store, cut, { policy })) ?? []).map((h) => [h.paymentId, h.amount, h.reason]);

describe('a held reason at a cut, after a decision taken later', () => {
  it.each(['pay', 'withhold'] as const)(
    'stays what it was at the cut when %s is decided after it',
    async (decision) => {
      const paymentId = `pay-${decision}`;
      await appendAll(fx.store, [
        registerRows({
          paymentId,
          dateTime,
          amount: 51_00n,
          receivers: [{ name: 'Alpha Shop', amount: 50_00n, fee: 1_00n }],
          reportId: `rep-${decision}`,
          observedAt,
        }),
        periodRow({ paymentId, dateTime, amount: 51_00n, status: 'failure', reportId: `rep-${decision}`, observedAt }),
        syncCompleted({
          from: at('2024-03-10T00:00:00Z'),
          to: at('2024-03-11T00:00:00Z'),
          completedAt: at('2024-03-14T00:00:00Z'),
          reportId: `rep-${decision}`,
          announced: 1,
        }),
      ]);
      await steps.settle();
      const cut = (await ledgerPosition(fx.db.sql))!;
      const before = (await heldWords(cut)).filter(([p]) => p === paymentId);
      expect(before).toHaveLength(1);
      expect(before[0]![2]).not.toContain('reviewed');

      const decided = await steps.decide(
        await steps.discrepancy(paymentId, 'status_mismatch'),
        decision,
        new Date('2024-04-02T09:00:00Z'),
      );
      expect(decided.ok).toBe(true);
      await steps.settle();
      expect((await heldWords(cut)).filter(([p]) => p === paymentId)).toEqual(before);
    },
  );
});

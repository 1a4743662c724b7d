import { describe, expect, it } from 'vitest';
import { matchPayment } from '../../src/reconciliation/matching';
import { findDiscrepancies } from '../../src/reconciliation/discrepancy-rules';
import { at, periodRow, recorded, registerRows, webhook } from './fixtures';

const T = at('2024-06-01T10:00:00Z');
const seen = at('2024-06-02T00:00:00Z');
const rules = {
  now: Date.parse(at('2024-06-10T00:00:00Z')),
  graceMs: 48 * 3_600_000,
  windows: [],
  resends: [],
  subMerchantOf: () => undefined,
};

const psp = (status: 'success' | 'failure') => [
  registerRows({ paymentId: 'p-flip', status, dateTime: T, amount: 10_00n, reportId: 'r1', observedAt: seen }),
  periodRow({ paymentId: 'p-flip', status, dateTime: T, amount: 10_00n, reportId: 'r1', observedAt: seen }),
];
const hook = (status: 'pending' | 'success' | 'failure', processedAt: string, receivedAt: string) =>
  webhook({ paymentId: 'p-flip', status, processedAt: at(processedAt), amount: 10_00n, receivedAt: at(receivedAt) });

describe('webhook deliveries reordered between two final statuses (flip-flop success → failure)', () => {
  // The PSP processed the operation as success at 10:00:05 and then as failure at 10:00:20 (its latest status,
  // as the register and the period also say). The failure webhook is delivered first, the older success webhook
  // later; the later delivery used to win.
  it('the webhook source keeps the status the PSP processed last (processed_at), not the one delivered last', () => {
    const obs = recorded([
      ...psp('failure'),
      hook('failure', '2024-06-01T10:00:20Z', '2024-06-01T10:00:21Z'),
      hook('success', '2024-06-01T10:00:05Z', '2024-06-01T10:00:40Z'),
    ]);
    const [op] = matchPayment(obs);
    expect(op!.webhook!.status).toBe('failure');
    expect(op!.webhook!.eventIds).toHaveLength(2);
    expect(findDiscrepancies(matchPayment(obs), rules).map((f) => f.type)).toEqual([]);
  });

  it('delivered in the order processed, the later final status still replaces the earlier one', () => {
    const obs = recorded([
      ...psp('failure'),
      hook('success', '2024-06-01T10:00:05Z', '2024-06-01T10:00:06Z'),
      hook('failure', '2024-06-01T10:00:20Z', '2024-06-01T10:00:21Z'),
    ]);
    expect(matchPayment(obs)[0]!.webhook!.status).toBe('failure');
  });

  it('two final statuses processed at the same time: the later delivery wins (as before)', () => {
    const obs = recorded([
      ...psp('success'),
      hook('failure', '2024-06-01T10:00:05Z', '2024-06-01T10:00:06Z'),
      hook('success', '2024-06-01T10:00:05Z', '2024-06-01T10:00:07Z'),
    ]);
    expect(matchPayment(obs)[0]!.webhook!.status).toBe('success');
  });

  it('a non-final status delivered after a final one never replaces it, whatever its processed_at', () => {
    const obs = recorded([
      ...psp('success'),
      hook('success', '2024-06-01T10:00:05Z', '2024-06-01T10:00:06Z'),
      hook('pending', '2024-06-01T10:00:30Z', '2024-06-01T10:00:31Z'),
    ]);
    expect(matchPayment(obs)[0]!.webhook!.status).toBe('success');
  });
});

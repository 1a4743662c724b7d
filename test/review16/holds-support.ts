import type { OperationMethod } from '../../src/events/ingest-events';
import { periodRow, registerRows, webhook } from '../discrepancies/fixtures';

/**
 * One operation of a payment as the register and the period state it (1.00 fee on a capture, the rest to Alpha
 * Shop), and its webhook (of `webhookAmount`, the amount unless a test makes them disagree).
 */
export function paymentOperation(
  paymentId: string,
  method: OperationMethod,
  amount: bigint,
  dateTime: string,
  reportId: string,
  seen: string,
  webhookAmount = amount,
) {
  const fee = method === 'capture' ? 1_00n : 0n;
  return [
    registerRows({
      paymentId,
      method,
      dateTime,
      amount,
      receivers: [{ name: 'Alpha Shop', amount: amount - fee, fee }],
      reportId,
      observedAt: seen,
    }),
    periodRow({ paymentId, method, dateTime, amount, merchantFee: fee, reportId, observedAt: seen }),
    webhook({
      paymentId,
      method,
      processedAt: dateTime,
      amount: webhookAmount,
      fee,
      receivedAt: seen,
      ...(method === 'capture' ? { operationId: `op-${dateTime}` } : {}),
    }),
  ];
}

/** paymentOperation's arguments after the payment id: a test's own `operation` of one payment. */
export type OperationArgs = Parameters<typeof paymentOperation> extends [string, ...infer R] ? R : never;

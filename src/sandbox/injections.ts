import type { Distortion, InjectionType, Operation, Order, SubMerchant } from './model';
import { GROUND_TRUTH_TYPES, STATUS_TEXT } from './model';
import type { Rng } from './random';

/** The disagreements the scenario injects into chosen orders: which orders may carry one, and how it lands. */

export const INJECTION_TYPES: readonly InjectionType[] = [...GROUND_TRUTH_TYPES, 'webhook_lost_resendable'];

/** The operation an injection lands on: the order's first settled, successful money-moving one. */
export function mainOperation(order: Order): Operation | undefined {
  return order.operations.find(
    (op) => op.status === 'success' && (op.method === 'purchase' || op.method === 'capture'),
  );
}

export function eligible(type: InjectionType, order: Order): boolean {
  const op = mainOperation(order);
  if (!op) return false;
  switch (type) {
    case 'split_mismatch':
    case 'duplicate':
      return op.receivers.length > 0;
    case 'unknown_sub_merchant':
      return order.kind === 'split_purchase' && order.operations.length === 1;
    default:
      return true;
  }
}

export function inject(order: Order, type: InjectionType, ghost: SubMerchant | undefined, r: Rng): Order {
  const op = mainOperation(order)!;
  const side = (): 'period' | 'webhook' => r.pick(['period', 'webhook'] as const);
  let changed: Operation = op;
  const distort = (d: Distortion) => (changed = { ...op, distortion: d });
  switch (type) {
    case 'missing_in_report':
      distort({ kind: 'omit', source: 'register' });
      break;
    case 'missing_in_period':
      distort({ kind: 'omit', source: 'period' });
      break;
    case 'missing_webhook':
      changed = { ...op, webhook: 'lost_for_good' };
      break;
    case 'webhook_lost_resendable':
      changed = { ...op, webhook: 'lost_resendable' };
      break;
    case 'status_mismatch':
      distort({ kind: 'status', source: side(), value: 'failure', statusCode: STATUS_TEXT.declined.code });
      break;
    case 'amount_mismatch':
      distort({ kind: 'amount', source: side(), value: op.originalAmount + BigInt(r.int(1, 20)) * 50n });
      break;
    case 'currency_mismatch': {
      const other = ['EUR', 'USD', 'UAH', 'XTS', 'PLN'].filter((c) => c !== op.currency);
      distort({ kind: 'currency', source: side(), value: r.pick(other) });
      break;
    }
    case 'fee_mismatch':
      distort({ kind: 'fee', source: side(), value: op.merchantFee + BigInt(r.int(1, 10)) * 10n });
      break;
    case 'split_mismatch': {
      const j = r.int(0, op.receivers.length - 1);
      distort({ kind: 'receiver_amount', receiverIndex: j, value: op.receivers[j]!.amount + 100n });
      break;
    }
    case 'duplicate':
      distort({ kind: 'duplicate_row', receiverIndex: r.int(0, op.receivers.length - 1) });
      break;
    case 'unknown_sub_merchant': {
      if (!ghost) return order;
      const receivers = op.receivers.map((x, j) => (j === 0 ? { ...x, subMerchantId: ghost.id, name: ghost.name } : x));
      changed = { ...op, receivers };
      break;
    }
    case 'report_count_mismatch':
      return order;
  }
  return { ...order, injection: type, operations: order.operations.map((o) => (o === op ? changed : o)) };
}

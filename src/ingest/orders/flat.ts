import { orderInput, type OrderInput } from './input';

/**
 * The flat layout of an order file (docs/orders.md): one row per split part, the order's fields repeated on
 * each row, the rows of one order together or apart:
 *
 *   order_id,created_at,currency,order_amount,sub_merchant_id,part_amount,customer_reference
 *   A-1,2025-01-05T10:00:00Z,EUR,100.00,sm-1,60.00,
 *   A-1,2025-01-05T10:00:00Z,EUR,100.00,sm-2,40.00,
 *   A-2,2025-01-05T11:00:00Z,EUR,30.00,,,              an order the marketplace keeps whole: no part
 *
 * The rows of one order are gathered into one order record (`split` from the parts, in the order of their
 * sub-merchant ids) and checked by
 * orderInput like any other; the order's fields must be the same on every row of it, else the order is
 * refused naming both lines. Placements only: an amendment or a cancellation is sent in the per-order layout.
 * The orders are held in memory until the file is read (a few hundred bytes an order), because rows of one
 * order may be anywhere in the file.
 */

export interface FlatIssue {
  readonly line: number;
  readonly field: string | null;
  readonly message: string;
}

interface FlatOrder {
  readonly orderId: string;
  readonly line: number;
  /** the order's own fields, as the first row of it gave them */
  readonly fields: Readonly<Record<string, unknown>>;
  readonly parts: Array<{ sub: unknown; amount: unknown; line: number }>;
}

const ORDER_LEVEL = ['created_at', 'currency', 'order_amount', 'customer_reference'] as const;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Gathers the rows of each order (in the order the orders first appear) and checks they agree. */
export function createFlatOrders() {
  const orders = new Map<string, FlatOrder>();
  const issues: FlatIssue[] = [];
  return {
    issues,
    add(line: number, record: Readonly<Record<string, unknown>>): void {
      const orderId = typeof record.order_id === 'string' ? record.order_id.trim() : '';
      if (!orderId) {
        issues.push({ line, field: 'order_id', message: 'required: printable text of at most 256 characters' });
        return;
      }
      const sub = record.sub_merchant_id;
      const amount = record.part_amount;
      const noSub = sub === undefined || sub === null || sub === '';
      const noAmount = amount === undefined || amount === null || amount === '';
      if (noSub !== noAmount) {
        issues.push({
          line,
          field: noSub ? 'sub_merchant_id' : 'part_amount',
          message: 'a part needs both sub_merchant_id and part_amount (both empty: a row of the order without a part)',
        });
        return;
      }
      const fields = Object.fromEntries(ORDER_LEVEL.map((k) => [k, record[k]]));
      let order = orders.get(orderId);
      if (!order) {
        order = { orderId, line, fields, parts: [] };
        orders.set(orderId, order);
      } else {
        for (const k of ORDER_LEVEL)
          if (!same(order.fields[k], fields[k])) {
            issues.push({
              line,
              field: k,
              message: `order ${orderId}: ${k} ${JSON.stringify(fields[k] ?? '')} differs from ${JSON.stringify(order.fields[k] ?? '')} at line ${order.line} (every row of an order repeats the order's fields)`,
            });
            return;
          }
      }
      if (!noSub) order.parts.push({ sub, amount, line });
    },
    /** Each order as orderInput checks it, with the line of a problem found in one of its parts. */
    *orders(opts: { now?: Date } = {}): Generator<{ line: number; lines: number[]; input: OrderInput }> {
      for (const o of orders.values()) {
        // parts in the order of their sub-merchant ids: the same order exported with its rows in another order
        // is the same version (a re-import is a duplicate, never a conflict)
        o.parts.sort((a, b) =>
          String(a.sub) < String(b.sub) ? -1 : String(a.sub) > String(b.sub) ? 1 : a.line - b.line,
        );
        const record: Record<string, unknown> = {
          order_id: o.orderId,
          amount: o.fields.order_amount,
          currency: o.fields.currency,
          created_at: o.fields.created_at,
          ...(o.fields.customer_reference === undefined ? {} : { customer_reference: o.fields.customer_reference }),
          ...(o.parts.length ? { split: o.parts.map((p) => ({ sub_merchant_id: p.sub, amount: p.amount })) } : {}),
        };
        const lines = [o.line, ...o.parts.map((p) => p.line).filter((l) => l !== o.line)];
        yield { lines, ...located(orderInput(record, opts), o) };
      }
    },
  };
}

/** A problem of the gathered record in the file's words: the part's line and column, the order's lines. */
function located(input: OrderInput, o: FlatOrder): { line: number; input: OrderInput } {
  if (input.ok) return { line: o.line, input };
  const part = /^split\[(\d+)\]\.(sub_merchant_id|amount)$/.exec(input.field);
  if (part) {
    const p = o.parts[Number(part[1])];
    const field = part[2] === 'amount' ? 'part_amount' : 'sub_merchant_id';
    return { line: p?.line ?? o.line, input: { ...input, field } };
  }
  if (input.field === 'amount') return { line: o.line, input: { ...input, field: 'order_amount' } };
  if (input.field === 'split') {
    const lines = o.parts.map((p) => p.line).join(', ');
    return {
      line: o.line,
      input: { ...input, field: 'part_amount', message: `${input.message} (order ${o.orderId}, lines ${lines})` },
    };
  }
  return { line: o.line, input };
}

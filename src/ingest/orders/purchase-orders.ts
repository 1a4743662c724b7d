import { stableStringify } from '../../canonical';
import type { PspPurchaseClient } from '../../psp/purchase-client';
import type { EventStore } from '../../store/types';
import { orderInput } from './input';

/** The same order but for its creation time (a retried purchase is recorded once, at its first attempt). */
function samePurchase(a: unknown, b: unknown): boolean {
  const { createdAt: _a, ...x } = a as Record<string, unknown>;
  const { createdAt: _b, ...y } = b as Record<string, unknown>;
  return stableStringify(x) === stableStringify(y);
}

/**
 * Orders recorded automatically when recon itself asks the PSP for a split purchase (the demo, or any caller
 * of the client made through this): the request is the marketplace's intent, so it is appended as an
 * `OrderPlaced` before the PSP is called. Recorded first, the order exists even when the PSP never receives
 * the request, which is then an order_not_at_psp after the grace period. Idempotent like every way in: the
 * same request again (a retry, at another time) is recorded once; the same order id with other values is refused
 * and no purchase is made.
 */
export function recordingPurchases(
  client: PspPurchaseClient,
  store: EventStore,
  opts: { now?: () => Date } = {},
): PspPurchaseClient {
  return {
    ...client,
    async splitPurchase(req) {
      const r = req as Record<string, unknown>;
      const split = Array.isArray(r.split)
        ? (r.split as Record<string, unknown>[]).map((p) => ({ sub_merchant_id: p.sub_merchant_id, amount: p.amount }))
        : undefined;
      const input = orderInput({
        order_id: r.order_id,
        amount: r.amount,
        currency: r.currency,
        created_at: (opts.now?.() ?? new Date()).toISOString(),
        ...(split ? { split } : {}),
      });
      // a request the order rules refuse is one the client refuses too (its validation names the field)
      if (input.ok) {
        const placed = (await store.readStream(input.item.stream)).find((e) => e.type === input.item.event.type);
        if (!placed) {
          await store.append(input.item.stream, [
            { ...input.item.event, metadata: { source: 'psp-purchase', posId: String(r.pos_id ?? '') } },
          ]);
        } else if (!samePurchase(placed.data, input.item.event.data)) {
          throw new Error(
            `order ${input.orderId} is already recorded with other values: a new purchase needs a new order id`,
          );
        }
      }
      return client.splitPurchase(req);
    },
  };
}

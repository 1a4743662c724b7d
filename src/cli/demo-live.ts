import type { PspProject } from '../config/env';
import { recordingPurchases } from '../ingest/orders/purchase-orders';
import type { Logger } from '../log';
import { maskPan } from '../log';
import { createPspPurchaseClient } from '../psp/purchase-client';
import type { EventStore } from '../store/types';

/** `recon demo`'s live step: a few purchases through the real purchase client, before the month is synced. */

// Test cards of the sandbox: outcome by the last four digits (0002 declined). Card data goes to the PSP
// only; recon keeps masks.
const TEST_CARDS = ['4111111111111111', '4000000000000002'];

/** A few purchases made through the real client (direct with card data, hosted with a redirect). */
export async function livePurchases(
  store: EventStore,
  project: PspProject,
  subMerchantIds: string[],
  serverUrl: string,
  log: Logger,
  month: string,
): Promise<string[]> {
  // the client records each purchase's order first (src/ingest/orders/purchase-orders.ts)
  const client = recordingPurchases(createPspPurchaseClient(project, { log }), store);
  const out: string[] = [];
  const customer = {
    customer_fname: 'Demo',
    customer_lname: 'Customer',
    customer_email: 'demo@example.com',
    customer_phone: '+380000000000',
  };
  const year = (new Date().getUTCFullYear() + 2) % 100;
  for (const [i, card] of TEST_CARDS.entries()) {
    const r = await client
      .splitPurchase({
        pos_id: project.posId,
        mode: 'direct',
        method: 'purchase',
        amount: 150.5,
        currency: 'UAH',
        description: 'demo direct purchase',
        order_id: `DEMO-${month}-D${i}`,
        order_3ds_bypass: 'always',
        cc_number: card,
        exp_month: 12,
        exp_year: year,
        card_cvv: '123',
        ...customer,
        customer_ip: '127.0.0.1',
        server_url: serverUrl,
        split: [
          { amount: 100, sub_merchant_id: subMerchantIds[0]! },
          { amount: 50.5, sub_merchant_id: subMerchantIds[1]! },
        ],
      })
      .catch((e: Error) => ({ kind: 'error' as const, message: e.message }));
    out.push(
      r.kind === 'direct'
        ? `direct ${maskPan(card)} → ${r.record.status}`
        : r.kind === 'error'
          ? `direct ${maskPan(card)} → ${r.message}`
          : 'direct → redirect',
    );
  }
  const hosted = await client
    .splitPurchase({
      pos_id: project.posId,
      mode: 'hosted',
      method: 'purchase',
      amount: 20,
      currency: 'UAH',
      description: 'demo hosted purchase',
      order_id: `DEMO-${month}-H0`,
      order_3ds_bypass: 'always',
      customer_patronym: 'Demovych',
      ...customer,
      server_url: serverUrl,
      split: [{ amount: 20, sub_merchant_id: subMerchantIds[0]! }],
    })
    .catch((e: Error) => ({ kind: 'error' as const, message: e.message }));
  out.push(
    hosted.kind === 'hosted'
      ? 'hosted → 303 to the checkout form'
      : hosted.kind === 'error'
        ? `hosted → ${hosted.message}`
        : 'hosted → record',
  );
  return out;
}

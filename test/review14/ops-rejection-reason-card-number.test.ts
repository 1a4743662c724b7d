import { describe, expect, it } from 'vitest';
import { rejectionStream } from '../../src/events/ingest-events';
import { createHttpApp } from '../../src/http/http-app';
import { createWebhookReceiver } from '../../src/http/receiver';
import { useTestStore } from '../support/db';
import { POS_ID, capturingLogger, formOf, post, project, purchaseWebhook } from '../ingest/helpers';

/**
 * A signed webhook the receiver cannot use is kept as SourceRecordRejected: its raw payload with card numbers
 * masked, and the reason, which quotes the value refused (`unknown method "…"`, `not a plain decimal amount:
 * "…"`). A card number in such a field (a PSP's misplaced field) was masked in the raw copy and stored whole in
 * the reason, in the event store for ever. The reason is now masked as the raw copy is (the sync's register and
 * period rejections take the same path).
 */

const fx = useTestStore();
const PAN = '4111111111111111';

describe('a rejected webhook quoting a card number', () => {
  it.each([
    ['method', { method: PAN }],
    ['status', { status: '4111 1111 1111 1111' }],
    ['amount', { amount: '4111-1111-1111-1111' }],
  ])('%s: the stored rejection holds no card number', async (field, over) => {
    const { log } = capturingLogger();
    const receiver = createWebhookReceiver({
      store: fx.store,
      projects: [project],
      log,
      options: { allowedIps: [], trustProxy: false, maxBodyBytes: 65_536 },
    });
    const app = createHttpApp({ routes: [receiver.handle], log });
    const { url } = await app.listen(0);
    try {
      const before = (await fx.store.readStream(rejectionStream(POS_ID))).length;
      const r = await post(`${url}/webhooks/${POS_ID}`, formOf(purchaseWebhook(over)));
      expect(r.status).toBe(400);
      const stored = (await fx.store.readStream(rejectionStream(POS_ID))).slice(before);
      expect(stored).toHaveLength(1);
      const data = stored[0]!.data as { field: string; reason: string };
      // the rejection names the field and says why...
      expect(data.field).toBe(field);
      expect(data.reason).toMatch(/unknown|not a plain decimal/);
      // ...without the card number anywhere in what is kept
      expect(JSON.stringify(stored[0]!.data).replace(/[ -]/g, '')).not.toContain(PAN);
    } finally {
      await receiver.drain();
      await app.close();
    }
  });
});

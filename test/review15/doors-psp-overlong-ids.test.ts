import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { paymentStream, RegisterRecordObserved, WebhookReceived } from '../../src/events/ingest-events';
import { recordRejected, registerObserved, webhookReceived } from '../../src/ingest/observations';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import { recordText } from '../bad-input/records.cases';
import { POS_A, payload } from '../bad-input/webhooks.cases';
import { useTestStore } from '../support/db';

/**
 * The PSP doors bounded a payment id (256 characters, it names a stream) but no other id or name: a register row with an
 * `orderId` or `receiverName` of 6,000 characters, a webhook with such an `order_id`, was accepted and stored.
 * The read models index those columns, and PostgreSQL refuses a b-tree entry over 2,704 bytes: the reconciliation
 * build could not go live (`index row size 6016 exceeds btree version 4 maximum 2704 for index
 * "operations_order_id_idx"`), and `runProjections` threw for every read model. Now such a record is refused
 * naming the field (over 256 characters, a receiver's name over 300: a `SourceRecordRejected` in a sync, 400 at the webhook door), and the read models go live.
 */

const t = useTestStore();
const WINDOW = { from: '2024-05-01T00:00:00Z', to: '2024-05-02T00:00:00Z' };
// random text, which PostgreSQL cannot compress below the b-tree's limit
const long = () => JSON.stringify(randomBytes(4500).toString('base64'));

/** What the sync stores for a register row's text: its observation, or its rejection. */
function registerDoor(text: string) {
  const parsed = parseRegisterRecord(text);
  if (!parsed.ok) return recordRejected(POS_A, 'register', parsed.field, parsed.reason, text, {});
  const meta = { source: 'register' as const, reportId: null, window: WINDOW, observedAt: '2024-05-02T01:00:00Z' };
  return registerObserved(POS_A, text, parsed.value, meta);
}

function webhookDoor(text: string) {
  const parsed = parseWebhookPayload(text);
  if (!parsed.ok) return recordRejected(POS_A, 'webhook', parsed.field, parsed.reason, text, {});
  return webhookReceived(POS_A, text, parsed.value, { receivedAt: '2024-05-01T10:00:03.000Z', remoteAddress: null });
}

describe('an id of 6,000 characters from the PSP', () => {
  it.each([
    ['orderId', 'register'],
    ['receiverName', 'register'],
    ['projectId', 'register'],
    ['order_id', 'webhook'],
    ['transaction_id', 'webhook'],
  ])('%s (%s) is refused naming the field', (field, kind) => {
    const text = kind === 'register' ? recordText('register', { [field]: long() }) : payload({ [field]: long() }).text;
    const r = kind === 'register' ? parseRegisterRecord(text) : parseWebhookPayload(text);
    const max = field === 'receiverName' ? 300 : 256;
    expect(r).toMatchObject({ ok: false, field, reason: `longer than ${max} characters (6000)` });
  });

  it('a 256-character order id is still accepted', () => {
    expect(parseRegisterRecord(recordText('register', { orderId: JSON.stringify('o'.repeat(256)) })).ok).toBe(true);
  });

  it('after a sync and a webhook holding them, every read model goes live with nothing set aside', {
    timeout: 120_000,
  }, async () => {
    const rows = [
      { paymentId: '"p-1"', receiverName: long() },
      { paymentId: '"p-2"', orderId: long() },
      { paymentId: '"p-3"' },
    ];
    for (const over of rows) {
      const { stream, event } = registerDoor(recordText('register', over));
      await t.store.append(stream, [event]);
    }
    const hook = webhookDoor(payload({ payment_id: '"p-4"', order_id: long() }).text);
    await t.store.append(hook.stream, [hook.event]);
    // the row without an overlong id is observed as before
    const p3 = await t.store.readStream(paymentStream(POS_A, 'p-3'));
    expect(p3.map((e) => e.type)).toEqual([RegisterRecordObserved.type]);
    expect(hook.event.type).not.toBe(WebhookReceived.type);

    const report = await runProjections({
      sql: t.db.sql,
      store: t.store,
      log: silentLogger,
      timezone: 'UTC',
      graceHours: 0,
    });
    for (const p of report.projections) expect(p.status, p.name).toBe('live');
    const [q] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from recon.quarantined_events`;
    expect(q!.n).toBe(0);
  });
});

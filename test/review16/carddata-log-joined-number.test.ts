import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { createHttpApp } from '../../src/http/http-app';
import { createWebhookReceiver } from '../../src/http/receiver';
import { createPostgresEventStore } from '../../src/store/postgres';
import { tempFile } from '../ingest/bank/support';
import { capturingLogger, formOf, post, project, purchaseWebhook } from '../ingest/helpers';
import { killAll, runRecon } from '../faults/support/processes';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The log's scrubber (and the command line's, which is the same) looked for a card number between word
 * boundaries, and `_` is a word character: `visa_4111111111111111`, a card number joined to a word by an
 * underscore, was no card number to it and was written whole (a webhook's pos_id in the log, a refused value on
 * the command line's stderr), while the store (src/ingest/card-numbers.ts), whose boundary is a letter or
 * digit, masked the same text. Now the log and the command line take the store's boundary.
 */

const PAN = '4111111111111111';
const RUN_MS = 180_000;
let db: TestDatabase;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  db = await createTestDatabase();
  env = reconEnv({ databaseUrl: db.url });
}, 120_000);
afterAll(async () => {
  await killAll();
  await db?.drop();
});

describe('a card number joined to a word by an underscore', () => {
  it('a webhook to an unknown pos_id so written is logged masked', async () => {
    const { log, lines } = capturingLogger();
    const receiver = createWebhookReceiver({
      store: createPostgresEventStore(db.sql),
      projects: [project],
      log,
      options: { allowedIps: [], trustProxy: false, maxBodyBytes: 65_536 },
    });
    const app = createHttpApp({ routes: [receiver.handle], log });
    const { url } = await app.listen(0);
    try {
      const r = await post(`${url}/webhooks/pos_${PAN}`, formOf(purchaseWebhook()));
      expect(r.status).toBe(404);
      const logged = lines.filter((l) => l.includes('webhook rejected'));
      expect(logged).toHaveLength(1);
      expect(logged[0]).not.toContain(PAN);
      expect(logged[0]).toContain('"posId":"pos_411111******1111"');
    } finally {
      await receiver.drain();
      await app.close();
    }
  });

  it('recon orders import prints the refusal masked', { timeout: 300_000 }, async () => {
    expect((await runRecon(['migrate'], env, RUN_MS)).code).toBe(0);
    const file = tempFile(
      'carddata-joined.csv',
      `order_id,amount,currency,created_at,split\nord-1,10.00,EUR,2025-01-05T10:00:00Z,shop_${PAN}!:1.00\n`,
    );
    const r = await runRecon(['orders', 'import', file], env, RUN_MS);
    expect(r.code, r.stderr).toBe(65);
    expect(r.stderr).toContain('is not a sub-merchant id');
    expect(r.stderr + r.stdout).not.toContain(PAN);
    expect(r.stderr).toContain('shop_411111******1111');
  });
});

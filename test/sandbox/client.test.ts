import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPspPurchaseClient, type PspPurchaseClient } from '../../src/psp/purchase-client';
import { isPspError } from '../../src/psp/errors';
import { parsePeriodRecord, parseRegisterRecord, parseWebhookPayload } from '../../src/psp/parse';
import { verify } from '../../src/psp/signature';
import { REGISTER_FIELDS } from '../../src/sandbox/render';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { startReceiver } from './receiver';

/** The PSP client of src/psp against the sandbox over real HTTP, as production code uses it. */

let sb: Sandbox;
let client: PspPurchaseClient;
let rx: Awaited<ReturnType<typeof startReceiver>>;
const now = () => new Date('2025-02-15T00:00:00Z');
const fast = { retryBaseMs: 1, retryMaxMs: 5, retryAfterMaxMs: 5, timeoutMs: 5_000, now };

beforeAll(async () => {
  rx = await startReceiver();
  sb = await startSandbox({
    scenario: { seed: 'client-test', payments: 300, month: '2025-01' },
    faults: { reportNotReadyPolls: 2 },
    webhookTarget: `${rx.url}/webhooks/{posId}`,
  });
  client = createPspPurchaseClient(sb.projects[0]!, fast);
});
afterAll(async () => {
  await sb?.close();
  await rx?.close();
});

async function collect(gen: AsyncGenerator<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const t of gen) out.push(t);
  return out;
}

describe('PSP client against the sandbox', () => {
  it('starts a register report, polls while not ready, streams the rows, and every row parses exactly', async () => {
    const from = new Date('2025-01-01T00:00:00Z');
    const to = new Date('2025-01-16T00:00:00Z');
    const { reportId, count } = await client.startRegisterReport({
      from,
      to,
      transactionDetails: [...REGISTER_FIELDS],
    });
    let polls = 0;
    let rows: string[] | undefined;
    while (!rows) {
      const r = await client.fetchRegisterReport(reportId);
      if (r.ready) rows = await collect(r.records);
      else polls++;
    }
    expect(polls).toBe(2);
    const mismatchDays = sb.scenario.countMismatchDays.filter((d) => d < '2025-01-16').length;
    expect(rows.length + mismatchDays).toBe(count);
    const expectedRows = [...sb.scenario.operations({ from: from.getTime(), to: to.getTime() })].reduce(
      (n, op) =>
        n +
        (op.distortion?.kind === 'omit' && op.distortion.source === 'register'
          ? 0
          : Math.max(1, op.receivers.length) + (op.distortion?.kind === 'duplicate_row' ? 1 : 0)),
      0,
    );
    expect(rows.length).toBe(expectedRows);
    for (const text of rows) {
      const p = parseRegisterRecord(text, { now: now() });
      expect(p.ok, text).toBe(true);
      if (p.ok) {
        expect(BigInt(p.value.amount!)).toBe(BigInt(p.value.originalAmount!) + BigInt(p.value.customerFee!));
        expect(p.value.projectId).toBe(sb.projects[0]!.posId);
      }
    }
  });

  it('reads period transactions for [from, to) with its default period end, each record parses', async () => {
    const from = new Date('2025-01-10T00:00:00Z');
    const to = new Date('2025-01-20T00:00:00Z');
    const texts = await collect(client.periodTransactions(from, to));
    const expected = [...sb.scenario.operations({ from: from.getTime(), to: to.getTime() })].filter(
      (op) => !(op.distortion?.kind === 'omit' && op.distortion.source === 'period'),
    );
    expect(texts).toHaveLength(expected.length);
    for (const t of texts) {
      const p = parsePeriodRecord(t, { now: now() });
      expect(p.ok, t).toBe(true);
    }
  });

  it('refuses a register period over 31 days locally, and the sandbox agrees on 31 days exactly', async () => {
    await expect(
      client.startRegisterReport({ from: new Date('2025-01-01T00:00:00Z'), to: new Date('2025-02-01T00:00:01Z') }),
    ).rejects.toMatchObject({ code: 'PSP_VALIDATION' });
    const ok = await client.startRegisterReport({
      from: new Date('2025-01-01T00:00:00Z'),
      to: new Date('2025-02-01T00:00:00Z'),
    });
    expect(ok.count).toBeGreaterThan(0);
  });

  it('gets one transaction and an order, cancels an unpaid hosted payment, and re-sends a lost webhook', async () => {
    const abandoned = [...sb.scenario.orders()].find((o) => o.kind === 'hosted_abandoned')!;
    const before = await client.getTransaction(abandoned.orderId, 'purchase');
    expect(before.status).toBe('init');
    const cancelled = await client.cancelPayment(abandoned.orderId);
    expect(cancelled[0]).toMatchObject({ status: 'failure', status_code: '6007' });
    const err = await client.cancelPayment(abandoned.orderId).catch((e: unknown) => e);
    expect(isPspError(err) && err.status === 400 && err.pspCode === 'cancel_not_allowed').toBe(true);

    const capture = [...sb.scenario.orders()].find((o) => o.kind === 'split_auth_capture' && o.operations.length >= 2)!;
    const list = await client.getOrderTransactions(capture.orderId);
    expect(list.map((r) => r.method)).toEqual(capture.operations.map((op) => op.method));

    const lost = sb.scenario.groundTruth.find((e) => e.type === 'missing_webhook' && e.detail.lostForGood === false)!;
    const rec = await client.resendWebhook(lost.orderId!, lost.method!, { transactionId: lost.transactionId! });
    expect(rec?.payment_id).toBe(lost.paymentId);
    await sb.settled();
    const hook = rx.received.find((w) => w.body.payment_id === lost.paymentId && w.body.method === lost.method)!;
    expect(verify(sb.projects[0]!.apiSecret, hook.data, hook.signature)).toBe(true);
    const parsed = parseWebhookPayload(Buffer.from(hook.data, 'base64url').toString('utf8'), { now: now() });
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.value.paymentId).toBe(lost.paymentId);
  });

  it('makes direct and hosted split purchases', async () => {
    const p = sb.projects[0]!;
    const base = {
      pos_id: p.posId,
      method: 'purchase' as const,
      amount: 250,
      currency: 'XTS',
      description: 'client test',
      order_3ds_bypass: 'always',
      customer_email: 'a@example.test',
      customer_phone: '+380670000001',
      server_url: `${rx.url}/webhooks/${p.posId}`,
      split: [
        { amount: 200, sub_merchant_id: sb.scenario.subMerchants[2]!.id },
        { amount: 50, sub_merchant_id: sb.scenario.subMerchants[3]!.id },
      ],
    };
    const direct = await client.splitPurchase({
      ...base,
      mode: 'direct',
      order_id: 'client-direct-1',
      cc_number: '4111111111111111',
      exp_month: 12,
      exp_year: 39,
      card_cvv: '123',
      customer_fname: 'Olena',
      customer_lname: 'Melnyk',
      customer_ip: '127.0.0.1',
    } as Parameters<PspPurchaseClient['splitPurchase']>[0]);
    expect(direct.kind).toBe('direct');
    if (direct.kind === 'direct')
      expect(direct.record).toMatchObject({ order_id: 'client-direct-1', status: 'success' });
    const hosted = await client.splitPurchase({
      ...base,
      mode: 'hosted',
      order_id: 'client-hosted-1',
      customer_patronym: 'Ivanivna',
    } as Parameters<PspPurchaseClient['splitPurchase']>[0]);
    expect(hosted.kind).toBe('hosted');
    if (hosted.kind === 'hosted') expect(hosted.location).toMatch(/\/api\/v1\/checkout\/[0-9a-f]+\/form$/);
    await sb.settled();
    const hook = rx.received.find((w) => w.body.order_id === 'client-direct-1')!;
    const parsed = parseWebhookPayload(Buffer.from(hook.data, 'base64url').toString('utf8'), { now: new Date() });
    expect(parsed.ok).toBe(true);
  });

  it('retries GETs through 5xx and 429 faults and gets the right answer; typed 401 without the secret', async () => {
    const flaky = await startSandbox({
      scenario: sb.scenario,
      faults: { serverErrorRate: 0.3, tooManyRequestsRate: 0.2, appliesTo: (r) => r.method === 'GET' },
    });
    try {
      const c = createPspPurchaseClient(flaky.projects[0]!, { ...fast, maxRetries: 8 });
      const order = sb.scenario.order(10);
      for (let i = 0; i < 10; i++) {
        const list = await c.getOrderTransactions(order.orderId);
        expect(list[0]!.payment_id).toBe(order.operations[0]!.paymentId);
      }
      expect(flaky.stats.faults.serverErrors + flaky.stats.faults.tooManyRequests).toBeGreaterThan(0);
      const wrong = createPspPurchaseClient({ ...flaky.projects[0]!, apiSecret: 'sk_wrong_secret_value' }, fast);
      const err = await wrong.getOrderTransactions(order.orderId).catch((e: unknown) => e);
      expect(isPspError(err)).toBe(true);
      if (isPspError(err)) {
        expect(err.status).toBe(401);
        expect(err.pspCode).toBe('unauthorized');
        expect(`${err.message} ${JSON.stringify(err)}`).not.toContain('sk_wrong_secret_value');
      }
    } finally {
      await flaky.close();
    }
  });
});

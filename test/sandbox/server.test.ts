import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pspTruthKeys } from '../../src/cli/demo-check';
import { verify } from '../../src/psp/signature';
import { DEFAULT_REGISTER_FIELDS } from '../../src/sandbox/render';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { startReceiver } from './receiver';

let sb: Sandbox;
/** scenario orders cancelled by a test: their cancellation adds a webhook */
const cancelledOrders = new Set<string>();
let rx: Awaited<ReturnType<typeof startReceiver>>;
const auth = () => {
  const p = sb.projects[0]!;
  return {
    'x-api-auth': `PAY ${p.apiKey}:${p.apiSecret}`,
    'x-api-key': p.endpointsKey,
    'content-type': 'application/json',
  };
};
const pos = () => sb.projects[0]!.posId;

async function startReport(body: Record<string, unknown>) {
  const res = await fetch(`${sb.reportUrl}/streaming-report/start`, {
    method: 'POST',
    headers: auth(),
    body: JSON.stringify({ project_id: pos(), ...body }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { report_id: string; count: number; message?: string; args?: { code: string } },
  };
}
async function fetchReport(id: string): Promise<unknown> {
  const res = await fetch(`${sb.reportUrl}/streaming-report/fetch/${id}`, {
    headers: { 'x-api-auth': auth()['x-api-auth'] },
  });
  expect(res.status).toBe(200);
  return res.json();
}
async function readyRows(id: string): Promise<Array<Record<string, unknown>>> {
  for (let i = 0; i < 10; i++) {
    const body = await fetchReport(id);
    if (Array.isArray(body)) return body as Array<Record<string, unknown>>;
    expect(body).toEqual({ message: expect.any(String), code: 'report_not_ready' });
  }
  throw new Error('report never ready');
}

beforeAll(async () => {
  rx = await startReceiver();
  sb = await startSandbox({
    scenario: { seed: 'server-test', payments: 300, month: '2025-01', timezone: 'Europe/Kyiv' },
    faults: { reportNotReadyPolls: 2 },
  });
});
afterAll(async () => {
  await sb?.close();
  await rx?.close();
});

describe('authentication', () => {
  it('answers 401 with the PSP error body for missing or wrong credentials, 403 for another pos', async () => {
    const p = sb.projects[0]!;
    const url = `${sb.baseUrl}/api/v1/pos/${p.posId}/orders/x`;
    const cases: Array<Record<string, string>> = [
      {},
      { 'x-api-auth': `PAY ${p.apiKey}:wrong-secret`, 'x-api-key': p.endpointsKey },
      { 'x-api-auth': `PAY unknown:${p.apiSecret}`, 'x-api-key': p.endpointsKey },
      { 'x-api-auth': `PAY ${p.apiKey}:${p.apiSecret}` },
      { 'x-api-auth': `PAY-HMAC-SHA1 ${p.apiKey}:c2lnbmF0dXJl`, 'x-api-key': p.endpointsKey },
    ];
    for (const headers of cases) {
      const res = await fetch(url, { headers });
      expect(res.status).toBe(401);
      const body = (await res.json()) as { message: string; args: { code: string } };
      expect(body).toEqual({ message: expect.any(String), args: { code: 'unauthorized' } });
      expect(JSON.stringify(body)).not.toContain(p.apiSecret);
    }
    const other = await fetch(`${sb.baseUrl}/api/v1/pos/00000000-0000-4000-8000-000000000000/orders/x`, {
      headers: auth(),
    });
    expect(other.status).toBe(403);
    // the register fetch needs X-API-Auth only
    const start = await startReport({ start_date: '2025-01-01T00:00:00+02:00', end_date: '2025-01-02T00:00:00+02:00' });
    const fetchOnly = await fetch(`${sb.reportUrl}/streaming-report/fetch/${start.body.report_id}`, {
      headers: { 'x-api-auth': auth()['x-api-auth'] },
    });
    expect(fetchOnly.status).toBe(200);
  });
});

describe('register report', () => {
  it('refuses a period over 31 days with 400 and accepts exactly 31 days', async () => {
    const long = await startReport({ start_date: '2025-01-01T00:00:00+02:00', end_date: '2025-02-01T00:00:01+02:00' });
    expect(long.status).toBe(400);
    expect(long.body.args?.code).toBe('period_too_long');
    const ok = await startReport({ start_date: '2025-01-01T00:00:00+02:00', end_date: '2025-02-01T00:00:00+02:00' });
    expect(ok.status).toBe(200);
    const noOffset = await startReport({ start_date: '2025-01-01T00:00:00', end_date: '2025-01-02T00:00:00+02:00' });
    expect(noOffset.status).toBe(400);
  });

  it('is not ready for the configured number of polls, then serves as many rows as announced (count fault aside)', async () => {
    const start = await startReport({
      start_date: '2025-01-01T00:00:00+02:00',
      end_date: '2025-01-31T23:59:59.999+02:00',
      transaction_details: ['paymentId', 'method', 'receiverName'],
    });
    expect(start.status).toBe(200);
    expect(await fetchReport(start.body.report_id)).toMatchObject({ code: 'report_not_ready' });
    expect(await fetchReport(start.body.report_id)).toMatchObject({ code: 'report_not_ready' });
    const rows = await readyRows(start.body.report_id);
    // the scenario's count-mismatch day lies in the month: announced one more than served
    expect(sb.scenario.countMismatchDays).toHaveLength(1);
    expect(start.body.count).toBe(rows.length + 1);
    // a window without that day agrees
    const day = sb.scenario.countMismatchDays[0]!;
    const other = day === '2025-01-02' ? '2025-01-03' : '2025-01-02';
    const clean = await startReport({ start_date: `${other}T00:00:00+02:00`, end_date: `${other}T23:59:59.999+02:00` });
    expect((await readyRows(clean.body.report_id)).length).toBe(clean.body.count);
  });

  it('honours transaction_details (only those fields, in that order), the defaults otherwise, and the filters', async () => {
    const fields = [
      'projectId',
      'paymentId',
      'originalAmount',
      'receiverName',
      'receiverAmount',
      'receiverFee',
      'reserveAmount',
    ];
    const a = await startReport({
      start_date: '2025-01-05T00:00:00+02:00',
      end_date: '2025-01-12T00:00:00+02:00',
      transaction_details: fields,
    });
    const rows = await readyRows(a.body.report_id);
    expect(rows.length).toBeGreaterThan(10);
    for (const r of rows) expect(Object.keys(r)).toEqual(fields);
    // split operations give one row per receiver with the operation's fields repeated
    const byPayment = new Map<string, number>();
    for (const r of rows) byPayment.set(r.paymentId as string, (byPayment.get(r.paymentId as string) ?? 0) + 1);
    expect(Math.max(...byPayment.values())).toBeGreaterThan(1);

    const d = await startReport({ start_date: '2025-01-05T00:00:00+02:00', end_date: '2025-01-12T00:00:00+02:00' });
    for (const r of await readyRows(d.body.report_id)) expect(Object.keys(r)).toEqual([...DEFAULT_REGISTER_FIELDS]);

    const f = await startReport({
      start_date: '2025-01-01T00:00:00+02:00',
      end_date: '2025-01-31T00:00:00+02:00',
      statuses: ['success'],
      methods: ['refund', 'capture'],
      transaction_details: ['method', 'status', 'dateTime'],
    });
    const filtered = await readyRows(f.body.report_id);
    expect(filtered.length).toBeGreaterThan(0);
    for (const r of filtered) {
      expect(r.status).toBe('success');
      expect(['refund', 'capture']).toContain(r.method);
      expect(r.dateTime as number).toBeGreaterThanOrEqual(Date.parse('2025-01-01T00:00:00+02:00'));
      expect(r.dateTime as number).toBeLessThanOrEqual(Date.parse('2025-01-31T00:00:00+02:00'));
    }
    const bad = await startReport({
      start_date: '2025-01-05T00:00:00+02:00',
      end_date: '2025-01-06T00:00:00+02:00',
      transaction_details: ['nope'],
    });
    expect(bad.status).toBe(400);
  });

  it('can change a page between two fetches (late status change) when asked', async () => {
    sb.setFaults({ registerChangesBetweenFetches: true, reportNotReadyPolls: 0 });
    try {
      const s = await startReport({
        start_date: '2025-01-01T00:00:00+02:00',
        end_date: '2025-01-31T00:00:00+02:00',
        statuses: ['pending'],
        transaction_details: ['paymentId', 'status'],
      });
      const first = await readyRows(s.body.report_id);
      const second = await readyRows(s.body.report_id);
      expect(first.length).toBeGreaterThan(0);
      expect(first.every((r) => r.status === 'pending')).toBe(true);
      expect(second.map((r) => r.paymentId)).toEqual(first.map((r) => r.paymentId));
      expect(second.every((r) => r.status === 'success')).toBe(true);
    } finally {
      sb.setFaults({ registerChangesBetweenFetches: false, reportNotReadyPolls: 2 });
    }
  });

  it('can stay not ready forever', async () => {
    sb.setFaults({ reportNeverReady: true });
    try {
      const s = await startReport({ start_date: '2025-01-01T00:00:00+02:00', end_date: '2025-01-02T00:00:00+02:00' });
      for (let i = 0; i < 5; i++)
        expect(await fetchReport(s.body.report_id)).toMatchObject({ code: 'report_not_ready' });
    } finally {
      sb.setFaults({ reportNeverReady: false });
    }
  });
});

describe('period transactions', () => {
  it('serves one record per operation in [startDate, enddate], amounts as two-decimal strings; both parameters required', async () => {
    const from = Date.parse('2025-01-10T00:00:00+02:00');
    const to = Date.parse('2025-01-17T00:00:00+02:00');
    const res = await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/transactions?startDate=${from}&enddate=${to - 1}`, {
      headers: auth(),
    });
    expect(res.status).toBe(200);
    const records = (await res.json()) as Array<Record<string, unknown>>;
    const expected = [...sb.scenario.operations({ from, to })].filter(
      (op) => op.distortion?.kind !== 'omit' || op.distortion.source !== 'period',
    );
    expect(records.map((r) => `${r.paymentId}/${r.method}`)).toEqual(
      expected.map((op) => `${op.paymentId}/${op.method}`),
    );
    for (const r of records) {
      expect(r.amount).toMatch(/^\d+\.\d{2}$/);
      expect(r.merchantFee).toMatch(/^\d+\.\d{2}$/);
      if (r.dateTime === '') expect(['init', 'pending']).toContain(r.status);
      else expect(typeof r.dateTime).toBe('number');
    }
    const missing = await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/transactions?startDate=${from}`, {
      headers: auth(),
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { args: { code: string } }).args.code).toBe('validation_error');
  });
});

describe('cancellation (section 4.8)', () => {
  it('cancels a hosted purchase in status init, and refuses anything else', async () => {
    const abandoned = [...sb.scenario.orders()].find((o) => o.kind === 'hosted_abandoned' && o.posId === pos())!;
    const res = await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/order/${abandoned.orderId}/cancel`, {
      method: 'POST',
      headers: auth(),
    });
    expect(res.status).toBe(200);
    cancelledOrders.add(abandoned.orderId);
    const body = (await res.json()) as Array<Record<string, unknown>>;
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({
      order_id: abandoned.orderId,
      status: 'failure',
      status_code: '6007',
      user_action_required: false,
      gateway_order_id: null,
      billing_order_id: null,
      user_action_url: null,
      eci: null,
      mcc: null,
      cc_mask: null,
    });
    // every source now shows the failure
    const order = (await (
      await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/orders/${abandoned.orderId}`, { headers: auth() })
    ).json()) as Array<Record<string, unknown>>;
    expect(order[0]!.status).toBe('failure');
    const at = abandoned.operations[0]!.at;
    const period = (await (
      await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/transactions?startDate=${at}&enddate=${at}`, { headers: auth() })
    ).json()) as Array<Record<string, unknown>>;
    expect(period.find((r) => r.orderId === abandoned.orderId)?.status).toBe('failure');

    const again = await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/order/${abandoned.orderId}/cancel`, {
      method: 'POST',
      headers: auth(),
    });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { args: { code: string } }).args.code).toBe('cancel_not_allowed');
    const direct = [...sb.scenario.orders()].find((o) => o.kind === 'split_purchase')!;
    const refused = await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/order/${direct.orderId}/cancel`, {
      method: 'POST',
      headers: auth(),
    });
    expect(refused.status).toBe(400);
    const unknown = await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/order/no-such-order/cancel`, {
      method: 'POST',
      headers: auth(),
    });
    expect(unknown.status).toBe(404);
  });
});

describe('purchases over HTTP', () => {
  const request = (over: Record<string, unknown>) => ({
    pos_id: pos(),
    mode: 'direct',
    method: 'purchase',
    amount: 100.5,
    currency: 'XTS',
    description: 'test',
    order_id: `live-${Math.random().toString(36).slice(2)}`,
    order_3ds_bypass: 'always',
    cc_number: '4111111111111111',
    exp_month: 12,
    exp_year: 39,
    card_cvv: '123',
    customer_fname: 'A',
    customer_lname: 'B',
    customer_email: 'a@example.test',
    customer_phone: '+380670000000',
    customer_ip: '127.0.0.1',
    server_url: `${rx.url}/webhooks/${pos()}`,
    split: [
      { amount: 60.25, sub_merchant_id: sb.scenario.subMerchants[0]!.id },
      { amount: 40.25, sub_merchant_id: sb.scenario.subMerchants[1]!.id },
    ],
    ...over,
  });

  it('direct: answers the payment record and sends its webhook to server_url; 3-D Secure and declines by card number', async () => {
    const req = request({});
    const res = await fetch(`${sb.baseUrl}/api/v1/split/purchase`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify(req),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"amount":100.5');
    const rec = JSON.parse(text) as Record<string, unknown>;
    expect(rec).toMatchObject({
      order_id: req.order_id,
      status: 'success',
      status_code: '1000',
      cc_mask: '411111******1111',
      mode: 'direct',
    });
    expect(text).not.toContain('4111111111111111');
    await sb.settled();
    const hook = rx.received.find((w) => w.body.order_id === req.order_id)!;
    expect(hook.path).toBe(`/webhooks/${pos()}`);
    expect(verify(sb.projects[0]!.apiSecret, hook.data, hook.signature)).toBe(true);

    const pending = (await (
      await fetch(`${sb.baseUrl}/api/v1/split/purchase`, {
        method: 'POST',
        headers: auth(),
        body: JSON.stringify(request({ cc_number: '4000000000003220' })),
      })
    ).json()) as Record<string, unknown>;
    expect(pending).toMatchObject({ status: 'pending', status_code: '2122', user_action_required: true });
    expect(pending.user_action_url).toMatch(/^http/);
    const declined = (await (
      await fetch(`${sb.baseUrl}/api/v1/split/purchase`, {
        method: 'POST',
        headers: auth(),
        body: JSON.stringify(request({ cc_number: '4000000000000002' })),
      })
    ).json()) as Record<string, unknown>;
    expect(declined.status).toBe('failure');

    const dup = await fetch(`${sb.baseUrl}/api/v1/split/purchase`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify(req),
    });
    expect(dup.status).toBe(409);
    const badSplit = await fetch(`${sb.baseUrl}/api/v1/split/purchase`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify(request({ split: [{ amount: 1, sub_merchant_id: 'nope' }] })),
    });
    expect(badSplit.status).toBe(400);
  });

  it('hosted: 303 to the checkout form; the order can be cancelled while init', async () => {
    const req = request({
      mode: 'hosted',
      cc_number: undefined,
      exp_month: undefined,
      exp_year: undefined,
      card_cvv: undefined,
    });
    const res = await fetch(`${sb.baseUrl}/api/v1/split/purchase`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify(req),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(new RegExp(`^${sb.baseUrl}/api/v1/checkout/[0-9a-f]+/form$`));
    const form = await fetch(res.headers.get('location')!);
    expect(await form.text()).toContain(req.order_id as string);
    const cancel = await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/order/${req.order_id}/cancel`, {
      method: 'POST',
      headers: auth(),
    });
    expect(cancel.status).toBe(200);
    expect(((await cancel.json()) as Array<{ status_code: string }>)[0]!.status_code).toBe('6007');
  });
});

describe('webhooks', () => {
  it('delivers every due webhook once, signed as section 5.4, form-urlencoded; lost ones stay lost', async () => {
    const r = await startReceiver();
    try {
      const range = { from: Date.parse('2025-01-01T00:00:00+02:00'), to: Date.parse('2025-01-11T00:00:00+02:00') };
      const stats = await sb.deliverWebhooks(`${r.url}/webhooks/{posId}`, { range, concurrency: 4 });
      const due = [...sb.scenario.operations(range)].filter(
        (op) => op.webhook === 'sent' || cancelledOrders.has(op.orderId),
      );
      const lost = [...sb.scenario.operations(range)].filter(
        (op) => op.webhook === 'lost_for_good' || op.webhook === 'lost_resendable',
      );
      expect(stats.delivered).toBe(due.length);
      expect(stats.lostByScenario).toBe(lost.length);
      expect(r.received).toHaveLength(due.length);
      const secret = sb.projects[0]!.apiSecret;
      for (const w of r.received) {
        expect(w.contentType).toBe('application/x-www-form-urlencoded');
        expect(w.signature).toHaveLength(28);
        expect(verify(secret, w.data, w.signature)).toBe(true);
        expect(verify(secret, `${w.data}x`, w.signature)).toBe(false);
        expect(w.path).toBe(`/webhooks/${pos()}`);
      }
      const keys = r.received.map((w) => `${w.body.payment_id}/${w.body.method}/${w.body.operation_id ?? ''}`);
      expect(new Set(keys).size).toBe(keys.length);
      for (const op of lost) expect(keys.some((k) => k.startsWith(`${op.paymentId}/${op.method}/`))).toBe(false);
      // subscription charges carry their recurring object
      expect(
        r.received.some(
          (w) => w.body.method === 'recurrent' && typeof (w.body.recurring as { id?: string })?.id === 'string',
        ),
      ).toBe(true);
    } finally {
      await r.close();
    }
  });

  it('duplicates, loses and reorders as configured, deterministically', async () => {
    const range = { from: Date.parse('2025-01-11T00:00:00+02:00'), to: Date.parse('2025-01-16T00:00:00+02:00') };
    const due = [...sb.scenario.operations(range)].filter(
      (op) => op.webhook === 'sent' || cancelledOrders.has(op.orderId),
    ).length;
    const r1 = await startReceiver();
    const dup = await sb.deliverWebhooks(`${r1.url}/w`, { range, duplicateRate: 1, concurrency: 1 });
    expect(dup.duplicatesSent).toBe(due);
    expect(r1.received).toHaveLength(2 * due);
    await r1.close();

    const r2 = await startReceiver();
    const lossy = await sb.deliverWebhooks(`${r2.url}/w`, { range, lossRate: 0.5, concurrency: 1 });
    expect(lossy.lostOnDelivery).toBeGreaterThan(0);
    expect(lossy.delivered + lossy.lostOnDelivery).toBe(due);
    expect(r2.received).toHaveLength(lossy.delivered);
    await r2.close();

    const r3 = await startReceiver();
    await sb.deliverWebhooks(`${r3.url}/w`, { range, reorderWindow: 10, concurrency: 1 });
    const r4 = await startReceiver();
    await sb.deliverWebhooks(`${r4.url}/w`, { range, concurrency: 1 });
    const order3 = r3.received.map((w) => `${w.body.payment_id}/${w.body.method}/${w.body.created_at}`);
    const order4 = r4.received.map((w) => `${w.body.payment_id}/${w.body.method}/${w.body.created_at}`);
    expect(order3).not.toEqual(order4);
    expect([...order3].sort()).toEqual([...order4].sort());
    await r3.close();
    await r4.close();

    // a receiver that refuses is counted, not retried
    const r5 = await startReceiver(500);
    const refused = await sb.deliverWebhooks(`${r5.url}/w`, { range, concurrency: 2, limit: 5 });
    expect(refused.failed).toBe(refused.attempted);
    expect(refused.byStatus['500']).toBe(refused.attempted);
    await r5.close();
  });

  it('a re-send no 2xx answers is recorded as not delivered, and the demo then expects its missing_webhook', async () => {
    const r = await startReceiver(503);
    try {
      await sb.deliverWebhooks(`${r.url}/hooks/{posId}`, { limit: 0 });
      const truth = sb.scenario.groundTruth.filter((e) => e.type === 'missing_webhook');
      const resendable = truth.filter((e) => e.detail.lostForGood === false);
      expect(resendable.length).toBeGreaterThanOrEqual(2);
      const [refused, healed] = resendable;
      const res = await fetch(
        `${sb.baseUrl}/api/v1/pos/${pos()}/orders/${refused!.orderId}/${refused!.method}?callback=true&transactionId=${refused!.transactionId}`,
        { headers: auth() },
      );
      expect(res.status).toBe(200);
      await sb.settled();
      expect(r.received.map((w) => w.body.payment_id)).toEqual([refused!.paymentId]);
      expect(sb.stats.webhooks.notDelivered).toContainEqual({
        paymentId: refused!.paymentId,
        method: refused!.method,
        transactionId: refused!.transactionId,
        error: 'HTTP 503',
      });
      // the demo's check: the refused one stays a finding to expect, the one healing brought does not
      const expected = pspTruthKeys(sb.scenario.groundTruth, sb.stats.webhooks.notDelivered);
      expect(expected).toContain(`missing_webhook ${refused!.paymentId}`);
      expect(expected).not.toContain(`missing_webhook ${healed!.paymentId}`);
      expect(pspTruthKeys(sb.scenario.groundTruth)).not.toContain(`missing_webhook ${refused!.paymentId}`);
    } finally {
      await r.close();
    }
  });

  it('re-sends on request (section 4.9), except the ones lost for good; for subscriptions by transactionId', async () => {
    const r = await startReceiver();
    try {
      await sb.deliverWebhooks(`${r.url}/hooks/{posId}`, { limit: 0 });
      const truth = sb.scenario.groundTruth.filter((e) => e.type === 'missing_webhook');
      const resendable = truth.find((e) => e.detail.lostForGood === false)!;
      const forGood = truth.find((e) => e.detail.lostForGood === true)!;
      for (const e of [resendable, forGood]) {
        const res = await fetch(
          `${sb.baseUrl}/api/v1/pos/${pos()}/orders/${e.orderId}/${e.method}?callback=true&transactionId=${e.transactionId}`,
          { headers: auth() },
        );
        expect(res.status).toBe(200);
        expect(((await res.json()) as { payment_id: string }).payment_id).toBe(e.paymentId);
      }
      await sb.settled();
      expect(r.received.map((w) => w.body.payment_id)).toEqual([resendable.paymentId]);
      expect(verify(sb.projects[0]!.apiSecret, r.received[0]!.data, r.received[0]!.signature)).toBe(true);

      const sub = [...sb.scenario.orders()].find(
        (o) => o.kind === 'subscription' && o.operations.filter((op) => op.method === 'recurrent').length >= 2,
      )!;
      const charge = sub.operations.filter((op) => op.method === 'recurrent')[0]!;
      const res = await fetch(
        `${sb.baseUrl}/api/v1/pos/${pos()}/orders/${sub.orderId}/purchase?callback=true&transactionId=${charge.transactionId}`,
        { headers: auth() },
      );
      const rec = (await res.json()) as { transaction_id: string; recurring: { id: string } };
      expect(rec.transaction_id).toBe(charge.transactionId);
      expect(rec.recurring.id).toBe(sub.recurringId);
      await sb.settled();
      const last = r.received[r.received.length - 1]!;
      expect(last.body).toMatchObject({
        transaction_id: charge.transactionId,
        method: 'recurrent',
        recurring: { id: sub.recurringId },
      });
      // without transactionId: the latest transaction of the subscription
      const latest = (await (
        await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/orders/${sub.orderId}/purchase`, { headers: auth() })
      ).json()) as { transaction_id: string };
      expect(latest.transaction_id).toBe(sub.operations[sub.operations.length - 1]!.transactionId);
      const badCallback = await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/orders/${sub.orderId}/purchase?callback=yes`, {
        headers: auth(),
      });
      expect(badCallback.status).toBe(400);
      // the subscription listing
      const list = await fetch(
        `${sb.baseUrl}/api/v1/pos/${pos()}/recurring/${sub.recurringId}?method=purchase&status=success`,
        { headers: auth() },
      );
      const items = (await list.json()) as Array<{ status: string }>;
      expect(items.length).toBe(
        sub.operations.filter(
          (op) => op.status === 'success' && (op.method === 'purchase' || op.method === 'recurrent'),
        ).length,
      );
      const noMethod = await fetch(`${sb.baseUrl}/api/v1/pos/${pos()}/recurring/${sub.recurringId}?status=success`, {
        headers: auth(),
      });
      expect(noMethod.status).toBe(400);
    } finally {
      await r.close();
    }
  });
});

describe('fault knobs', () => {
  it('5xx, 429 with Retry-After, truncated JSON, connection reset; the sequence depends on the seed only', async () => {
    const a = await startSandbox({
      scenario: sb.scenario,
      faults: { serverErrorRate: 0.3, tooManyRequestsRate: 0.2, retryAfterSeconds: 1 },
    });
    const b = await startSandbox({
      scenario: sb.scenario,
      faults: { serverErrorRate: 0.3, tooManyRequestsRate: 0.2, retryAfterSeconds: 1 },
    });
    try {
      const statuses = async (s: Sandbox) => {
        const out: number[] = [];
        const p = s.projects[0]!;
        for (let i = 0; i < 40; i++) {
          const res = await fetch(`${s.baseUrl}/api/v1/pos/${p.posId}/orders/${s.scenario.order(i).orderId}`, {
            headers: { 'x-api-auth': `PAY ${p.apiKey}:${p.apiSecret}`, 'x-api-key': p.endpointsKey },
          });
          if (res.status === 429) expect(res.headers.get('retry-after')).toBe('1');
          if (res.status >= 500)
            expect(((await res.json()) as { args: { code: string } }).args.code).toBe('internal_error');
          else await res.arrayBuffer();
          out.push(res.status);
        }
        return out;
      };
      const sa = await statuses(a);
      expect(await statuses(b)).toEqual(sa);
      expect(sa).toContain(200);
      expect(sa).toContain(429);
      expect(sa.some((x) => x >= 500)).toBe(true);
      expect(a.stats.faults.serverErrors + a.stats.faults.tooManyRequests).toBe(sa.filter((x) => x !== 200).length);

      a.setFaults({ serverErrorRate: 0, tooManyRequestsRate: 0, truncateRate: 1 });
      const p = a.projects[0]!;
      const h = { 'x-api-auth': `PAY ${p.apiKey}:${p.apiSecret}`, 'x-api-key': p.endpointsKey };
      const truncated = await fetch(`${a.baseUrl}/api/v1/pos/${p.posId}/orders/${a.scenario.order(0).orderId}`, {
        headers: h,
      });
      expect(truncated.status).toBe(200);
      await expect(truncated.json()).rejects.toThrow();
      const period = await fetch(
        `${a.baseUrl}/api/v1/pos/${p.posId}/transactions?startDate=${a.scenario.from.getTime()}&enddate=${a.scenario.to.getTime()}`,
        { headers: h },
      );
      await expect(period.json()).rejects.toThrow();

      a.setFaults({ truncateRate: 0, resetRate: 1 });
      await expect(fetch(`${a.baseUrl}/api/v1/pos/${p.posId}/orders/x`, { headers: h })).rejects.toThrow();
      a.setFaults({ resetRate: 0, serverErrorRate: 1, appliesTo: (req) => req.method === 'POST' });
      expect(
        (await fetch(`${a.baseUrl}/api/v1/pos/${p.posId}/orders/${a.scenario.order(0).orderId}`, { headers: h }))
          .status,
      ).toBe(200);
      expect(a.stats.faults.resets).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

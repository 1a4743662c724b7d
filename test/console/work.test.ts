import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { person } from '../payout-runs/fixtures';
import { wasmErrors } from '../payout-runs/validate';
import { queuePage } from '../../src/console/queue';
import { dataOf, isEvent, newEvent } from '../../src/events/catalog';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { confirmPayeeAccount } from '../../src/payout-runs/payees';
import { addUser } from '../../src/people/manage';
import { createPostgresEventStore } from '../../src/store/postgres';
import { CHROMIUM, checkPage, launch, SHOTS, signedIn } from './browser';
import { DEMO_MONTH, type DemoServer, startDemoServer } from './demo-server';

/**
 * The console's work pages on the demo's month: an exception worked from assignment to an approved
 * write-off by two people, maker-checker refusals shown in words, bulk actions after a dry run, and a payout
 * run drafted, approved and its pain.001 downloaded — in Debian's chromium, with axe and the keyboard; the
 * role and CSRF checks over plain HTTP.
 */

const hasChromium = existsSync(CHROMIUM);
let s: DemoServer;
let approver: string;
let viewer: string;
let secondApprover: string;

beforeAll(async () => {
  s = await startDemoServer({
    config: {
      // a write-off of more than 1.00 needs a second person
      exceptions: { writeOff: { approvalAbove: '100' } },
      bank: { accounts: [{ id: 'UA213223130000026007233566001', currency: 'UAH', role: 'payouts' }] },
    },
    env: { RECON_ISSUER_NAME: 'Marketplace LLC' },
  });
  const store = createPostgresEventStore(s.db.sql);
  approver = (await addUser(store, s.tokens.admin, { id: 'approver-1', name: 'Olena Approver', role: 'approver' }))
    .token;
  secondApprover = (
    await addUser(store, s.tokens.admin, { id: 'approver-2', name: 'Taras Approver', role: 'approver' })
  ).token;
  viewer = (await addUser(store, s.tokens.admin, { id: 'viewer-1', name: 'Viewer', role: 'viewer' })).token;
  await givePayoutAccounts(store);
  await new Promise((r) => setTimeout(r, 1100)); // the server reads the users again at most a second old
}, 300_000);
afterAll(async () => {
  await s?.stop();
});

/**
 * The demo registers no payout account; a run pays only sub-merchants with one: register them again with one,
 * which a named approver confirms (an account first given after onboarding is a change).
 */
async function givePayoutAccounts(store: ReturnType<typeof createPostgresEventStore>): Promise<void> {
  const subs = await s.db.sql<{ sub_merchant_id: string }[]>`select sub_merchant_id from recon.sub_merchants`;
  expect(subs.length).toBeGreaterThan(0);
  for (const { sub_merchant_id: id } of subs) {
    const last = (await store.readStream(subMerchantStream(id)))
      .filter((e) => isEvent(SubMerchantRegistered, e))
      .at(-1);
    if (!last) continue;
    const data = { ...dataOf(SubMerchantRegistered, last), payoutAccount: 'UA743052990000026007233566001' };
    await store.append(subMerchantStream(id), [newEvent(SubMerchantRegistered, data)]);
    await confirmPayeeAccount(store, person('approver-1', 'approver'), {
      subMerchantId: id,
      account: data.payoutAccount,
      note: 'called back on the number on file',
    });
  }
}

async function login(token: string): Promise<string> {
  const r = await fetch(`${s.url}/console/login`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  expect(r.status).toBe(303);
  return (r.headers.get('set-cookie') ?? '').split(';')[0]!;
}
const get = (p: string, cookie: string) => fetch(`${s.url}${p}`, { headers: { cookie }, redirect: 'manual' });
const post = (p: string, cookie: string, body: Record<string, string>) =>
  fetch(`${s.url}${p}`, { method: 'POST', headers: { cookie }, body: new URLSearchParams(body), redirect: 'manual' });
const csrfIn = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

/** An open exception with an amount in doubt above the threshold, and one more. */
async function openIds(n: number): Promise<string[]> {
  const page = await queuePage(s.db.sql, {
    legs: ['psp', 'orders', 'payouts', 'settlement'],
    type: null,
    status: 'open',
    assignee: null,
    severity: null,
    subMerchant: null,
    currency: 'UAH',
    minAmount: 101n,
    olderThanDays: null,
    order: 'asc',
    after: null,
  });
  expect(page.rows.length).toBeGreaterThanOrEqual(n);
  return page.rows.slice(0, n).map((r) => r.id);
}

describe('roles and CSRF on the work pages (HTTP)', () => {
  it('refuses a forged POST without the CSRF token, and writes nothing', async () => {
    const [id] = await openIds(1);
    const cookie = await login(s.tokens.analyst);
    const r = await post(`/console/exceptions/${id}/comment`, cookie, { text: 'forged' });
    expect(r.status).toBe(403);
    const page = await (await get(`/console/exceptions/${id}`, cookie)).text();
    expect(page).not.toContain('forged');
  });

  it('acts with plain forms (no JavaScript): 303 back to the exception; a wrong value refused in words, 400', async () => {
    const [, , third] = await openIds(3);
    const cookie = await login(s.tokens.analyst);
    const csrf = csrfIn(await (await get(`/console/exceptions/${third}`, cookie)).text());
    const ok = await post(`/console/exceptions/${third}/comment`, cookie, {
      text: 'Plain form, no script.',
      _csrf: csrf,
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(`/console/exceptions/${third}?done=comment`);
    const page = await (await get(`/console/exceptions/${third}`, cookie)).text();
    expect(page).toMatch(/<td>commented<\/td><td class="text">Plain form, no script\.<\/td>/);
    const bad = await post(`/console/exceptions/${third}/comment`, cookie, { text: '   ', _csrf: csrf });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/role="alert"[^>]*>Refused: text: required/);
  });

  it('shows a viewer no action, and refuses the action when posted with a valid token', async () => {
    const [id] = await openIds(1);
    const cookie = await login(viewer);
    for (const p of [`/console/exceptions/${id}`, '/console/exceptions', '/console/payout-runs']) {
      const text = await (await get(p, cookie)).text();
      const actions = [...text.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]);
      expect(
        actions.filter((a) => a !== '/console/logout' && a !== '/console/language'),
        p,
      ).toEqual([]);
    }
    const page = await (await get(`/console/exceptions/${id}`, cookie)).text();
    const r = await post(`/console/exceptions/${id}/comment`, cookie, { text: 'by a viewer', _csrf: csrfIn(page) });
    expect(r.status).toBe(403);
    expect(await r.text()).toMatch(/role="alert"[^>]*>Refused: /);
    const d = await post('/console/payout-runs/draft', cookie, { month: DEMO_MONTH, _csrf: csrfIn(page) });
    expect(d.status).toBe(403);
  });
});

describe.skipIf(!hasChromium)('the issue scenario in a real browser (Debian chromium)', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  const logout = async (page: Page) => {
    await page.click('button:text("Log out")');
    await page.waitForURL(`${s.url}/console/login`);
    await page.context().close();
  };

  it('works an exception: assign, comment, propose a write-off; a second person approves; both in the history', async () => {
    const page = await signedIn(browser, s.url, s.tokens.analyst);
    await page.click('nav >> text=Exceptions');
    await page.fill('input[name=currency]', 'UAH');
    await page.fill('input[name=min_amount]', '101');
    await page.click('form[role=search] button[type=submit]');
    await page.waitForURL(/min_amount=101/);
    await checkPage(page, 'exceptions-filtered');
    await page.locator('#queue tbody tr a[href^="/console/exceptions/"]').first().click();
    // the queue's own heading ("Exceptions") holds the word "Exception": wait for the exception's address instead
    await page.waitForURL(/\/console\/exceptions\/[0-9a-f-]{36}$/);
    const url = page.url();
    const id = url.split('/').pop()!;
    await checkPage(page, 'exception');
    await page.selectOption('#act-assign select[name=assignee]', 'approver-1');
    await page.click('#act-assign button');
    await page.waitForURL(/done=assign/);
    await page.fill('#act-comment textarea', 'Asked the PSP for the settlement file.');
    await page.click('#act-comment button');
    await page.waitForURL(/done=comment/);
    await page.selectOption('#act-accept select[name=decision]', 'write_off');
    await page.fill('#act-accept textarea', 'Below the cost of chasing it.');
    await page.click('#act-accept button');
    await page.waitForURL(/done=accept/);
    expect(await page.textContent('main')).toContain('pending_approval');
    // an analyst may not approve: no approve form
    expect(await page.locator('#act-approve').count()).toBe(0);
    await logout(page);

    const second = await signedIn(browser, s.url, approver);
    await second.goto(url);
    await checkPage(second, 'exception-pending');
    await second.fill('#act-approve textarea', 'Agreed: write it off.');
    await second.click('#act-approve button');
    await second.waitForURL(/done=approve/);
    const rows = await second.$$eval('#history tbody tr', (trs) => trs.map((t) => t.textContent ?? ''));
    const analystId = /console analyst (\S+) token/.exec(s.output())![1]!;
    const order = ['assign', 'comment', 'propose|accept', 'approve'];
    let at = -1;
    for (const what of order) {
      const i = rows.findIndex((r, k) => k > at && new RegExp(what).test(r));
      expect(i, `${what} in ${rows.join(' / ')}`).toBeGreaterThan(at);
      at = i;
    }
    expect(rows.some((r) => r.includes(analystId) && /write_off/.test(r))).toBe(true);
    expect(rows.some((r) => r.includes('approver-1') && /approve/.test(r))).toBe(true);
    expect(await second.textContent('main')).toContain('accepted');
    await second.screenshot({ path: path.join(SHOTS, 'exception-history.png'), fullPage: true });
    // an assignee filter finds it
    await second.goto(`${s.url}/console/exceptions?assignee=approver-1&status=`);
    expect(await second.locator(`#queue tr[data-id="${id}"]`).count()).toBe(1);
    await logout(second);
  }, 300_000);

  it('refuses the approver their own proposal, in words on the page', async () => {
    const [, other] = await openIds(2);
    const page = await signedIn(browser, s.url, approver);
    await page.goto(`${s.url}/console/exceptions/${other}`);
    await page.selectOption('#act-accept select[name=decision]', 'write_off');
    await page.fill('#act-accept textarea', 'Mine to propose.');
    await page.click('#act-accept button');
    await page.waitForURL(/done=accept/);
    await page.fill('#act-approve textarea', 'And mine to approve?');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/approve')),
      page.click('#act-approve button'),
    ]);
    expect(answer.status()).toBe(403);
    expect(await page.textContent('[role=alert]')).toMatch(/^Refused: .+/);
    await page.screenshot({ path: path.join(SHOTS, 'exception-refused.png'), fullPage: true });
    await logout(page);
  }, 120_000);

  it('previews a bulk comment (nothing written), then applies it', async () => {
    const page = await signedIn(browser, s.url, s.tokens.analyst);
    await page.goto(`${s.url}/console/exceptions?leg=settlement&status=open`);
    await page.selectOption('select[name=bulk_action]', 'comment');
    await page.fill('input[name=reason]', 'Chasing the bank for these.');
    await page.click('button:text("Preview (nothing is changed)")');
    await page.waitForSelector('#bulk-changes');
    const n = await page.locator('#bulk-changes li').count();
    expect(n).toBeGreaterThan(0);
    expect(await page.textContent('main')).toContain('Will change');
    const before = await s.db.sql`select 1 from recon.exception_history where why = 'Chasing the bank for these.'`;
    expect(before.length).toBe(0);
    await checkPage(page, 'exceptions-bulk');
    await page.click('button:text("Apply to these exceptions")');
    await page.waitForSelector('h2:text("Changed")');
    await expect
      .poll(
        async () =>
          (await s.db.sql`select 1 from recon.exception_history where why = 'Chasing the bank for these.'`).length,
        { timeout: 30_000 },
      )
      .toBe(n);
    await logout(page);
  }, 120_000);

  it('downloads a statement PDF; a run drafted is refused to its drafter, approved by another, its pain.001 downloaded', async () => {
    const analyst = await signedIn(browser, s.url, s.tokens.analyst);
    await analyst.click('nav >> text=Statements');
    const pdf = analyst.locator('a[href*=".pdf"]').first();
    const [download] = await Promise.all([analyst.waitForEvent('download'), pdf.click()]);
    expect(
      readFileSync(await download.path())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    await analyst.click('nav >> text=Payout runs');
    await analyst.waitForSelector('h1:text("Payout runs")');
    expect(await analyst.locator('#draft').count()).toBe(1); // payout-run.create
    await logout(analyst);

    const drafter = await signedIn(browser, s.url, approver);
    await drafter.click('nav >> text=Payout runs');
    await drafter.waitForSelector('h1:text("Payout runs")');
    await drafter.fill('#draft input[name=month]', DEMO_MONTH);
    await drafter.click('#draft button');
    await drafter.waitForURL(/\/console\/payout-runs\/PR-/);
    const runId = drafter.url().split('/').pop()!;
    expect(runId).toBe(`PR-${DEMO_MONTH}-1`);
    expect(await drafter.locator('#lines tbody tr').count()).toBeGreaterThan(0);
    await checkPage(drafter, 'payout-run');
    const [answer] = await Promise.all([
      drafter.waitForResponse((r) => r.url().endsWith('/approve')),
      drafter.click('#approve button'),
    ]);
    expect(answer.status()).toBe(403);
    expect(await drafter.textContent('[role=alert]')).toMatch(/another approver must approve it/);
    await logout(drafter);

    const page = await signedIn(browser, s.url, secondApprover);
    await page.click('nav >> text=Payout runs');
    await page.waitForSelector('h1:text("Payout runs")');
    await checkPage(page, 'payout-runs');
    await page.click(`a:text("${runId}")`);
    await page.waitForSelector('#approve');
    await page.click('#approve button');
    await page.waitForURL(/done=approve/);
    expect(await page.textContent('main')).toContain('approver-2');
    const link = page.locator('a[href$="/pain.001"]');
    const [file] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const saved = await file.path();
    const xml = readFileSync(saved, 'utf8');
    // valid against the stand-in schema the payout-runs tests use (libxml2 in WebAssembly: no system xmllint needed)
    expect(await wasmErrors(xml)).toEqual([]);
    expect(xml).toContain(`<MsgId>${runId}</MsgId>`);
    expect(file.suggestedFilename()).toBe(`${runId}.pain.001.001.09.xml`);
    await logout(page);
  }, 300_000);
});

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePage, type QueueFilter } from '../../src/console/queue';
import { newEvent } from '../../src/events/catalog';
import { severityOf } from '../../src/exceptions/severity';
import { SEVERITIES } from '../../src/reconciliation/discrepancies/registry';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { addUser, revokeUser, rotateToken } from '../../src/people/manage';
import { allDiscrepancies, toRecord } from '../../src/reconciliation/discrepancy-queries';
import { amountInDoubt } from '../../src/reconciliation/discrepancy-summary';
import { createPostgresEventStore } from '../../src/store/postgres';
import { demoBankConfig } from '../../src/cli/demo-bank';
import { cutDay, payoutStatusesAt } from '../../src/export/payouts/paid-out';
import { SHOTS } from './browser';
import { type DemoServer, startDemoServer } from './demo-server';

/**
 * The console on the demo's month, served by `recon demo --serve`: sessions, CSRF, roles and the login limit
 * over real HTTP; the queue's SQL (amount in doubt, keyset pages) against the JS it mirrors; then, in Debian's
 * chromium, every page with axe, the keyboard, a hostile corpus, a filtered queue, a payment, a statement
 * PDF, a job run, the language switch and logout; screenshots to docs/console/ with RECON_UPDATE_SCREENSHOTS=1
 * (browser.ts `SHOTS`).
 */

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(`test/console: ${CHROMIUM} is missing: the browser tests are skipped (.ci/run installs it)`);
const CONTROLS = 'a[href], button, input:not([type=hidden]), select';

let s: DemoServer;
let viewer: string;

beforeAll(async () => {
  s = await startDemoServer();
  const store = createPostgresEventStore(s.db.sql);
  viewer = (await addUser(store, s.tokens.admin, { id: 'auditor-1', name: 'External Auditor', role: 'viewer' })).token;
}, 300_000);
afterAll(async () => {
  await s?.stop();
});

/** Logs in over HTTP; the session cookie (name=value). */
async function login(token: string): Promise<string> {
  const r = await fetch(`${s.url}/console/login`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  expect(r.status).toBe(303);
  const cookie = r.headers.get('set-cookie') ?? '';
  expect(cookie).toMatch(/HttpOnly/);
  expect(cookie).toMatch(/SameSite=Strict/);
  expect(cookie).not.toMatch(/Secure/); // plain HTTP on loopback, no trusted proxy
  return cookie.split(';')[0]!;
}

const get = (p: string, cookie: string) => fetch(`${s.url}${p}`, { headers: { cookie }, redirect: 'manual' });
const post = (p: string, cookie: string | null, body: Record<string, string>) =>
  fetch(`${s.url}${p}`, {
    method: 'POST',
    headers: cookie ? { cookie } : {},
    body: new URLSearchParams(body),
    redirect: 'manual',
  });
const csrfIn = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

describe('sessions, CSRF and roles over HTTP', () => {
  it('sends the login page to a visitor without a session, with the protections on every answer', async () => {
    const r = await fetch(`${s.url}/console/exceptions`, { redirect: 'manual' });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/console/login');
    const p = await fetch(`${s.url}/console/login`);
    expect(p.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(p.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(p.headers.get('x-frame-options')).toBe('DENY');
    expect(p.headers.get('cache-control')).toBe('no-store');
    const htmx = await fetch(`${s.url}/console/assets/htmx.min.js`);
    expect(htmx.status).toBe(200);
    expect(await htmx.text()).toContain('htmx');
  });

  it('refuses a forged POST: no CSRF token, a wrong one, one of another session, none at all without a session', async () => {
    const admin = await login(s.tokens.admin);
    const other = await login(s.tokens.analyst);
    const otherCsrf = csrfIn(await (await get('/console/jobs', other)).text());
    const job = 'nightly-reconciliation';
    const forged: Record<string, string>[] = [{ job }, { job, _csrf: 'x'.repeat(43) }, { job, _csrf: otherCsrf }];
    for (const body of forged)
      expect((await post('/console/jobs/run', admin, body)).status, JSON.stringify(body)).toBe(403);
    expect((await post('/console/jobs/run', null, { job, _csrf: otherCsrf })).status).toBe(403);
    expect((await post('/console/logout', admin, {})).status).toBe(403);
    // the session still works: nothing was done, nobody logged out
    expect((await get('/console/jobs', admin)).status).toBe(200);
  });

  it('shows a viewer no action and refuses the action when forged with a valid CSRF token', async () => {
    const cookie = await login(viewer);
    const page = await (await get('/console/jobs', cookie)).text();
    expect(page).not.toContain('/console/jobs/run');
    const r = await post('/console/jobs/run', cookie, { job: 'nightly-reconciliation', _csrf: csrfIn(page) });
    expect(r.status).toBe(403);
    const runs = await s.db.sql`select 1 from job_runs where trigger = 'manual'`;
    expect(runs.length).toBe(0);
    // an analyst may not run jobs either (administrators only)
    const analyst = await login(s.tokens.analyst);
    const a = await (await get('/console/jobs', analyst)).text();
    expect(a).not.toContain('/console/jobs/run');
  });

  it('ends the session on logout: the same cookie then leads to the login page', async () => {
    const cookie = await login(s.tokens.analyst);
    const page = await (await get('/console', cookie)).text();
    const out = await post('/console/logout', cookie, { _csrf: csrfIn(page) });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await get('/console', cookie)).headers.get('location')).toBe('/console/login');
    const hash = createHash('sha256').update(cookie.split('=')[1]!).digest('hex');
    expect((await s.db.sql`select 1 from console_sessions where id_sha256 = ${hash}`).length).toBe(0);
  });

  it('ends the sessions of a user whose token is rotated or who is revoked', async () => {
    const store = createPostgresEventStore(s.db.sql);
    const a = await addUser(store, s.tokens.admin, { id: 'rotating', name: 'Rotating Analyst', role: 'analyst' });
    const b = await addUser(store, s.tokens.admin, { id: 'leaving', name: 'Leaving Analyst', role: 'analyst' });
    // the server reads the users again at most a second old: new users can log in after that
    await new Promise((r) => setTimeout(r, 1100));
    const before = await login(a.token);
    const leaving = await login(b.token);
    const rotated = await rotateToken(store, s.tokens.admin, 'rotating');
    await revokeUser(store, s.tokens.admin, 'leaving', 'left the company');
    // the server reads the users again within a second
    await expect.poll(async () => (await get('/console', before)).status, { timeout: 5000 }).toBe(303);
    await expect.poll(async () => (await get('/console', leaving)).status, { timeout: 5000 }).toBe(303);
    expect((await get('/console', await login(rotated.token))).status).toBe(200);
  });

  it('keeps only the hash of a session id', async () => {
    const cookie = await login(s.tokens.admin);
    const id = cookie.split('=')[1]!;
    const stored = await s.db.sql`select 1 from console_sessions where id_sha256 = ${id} or csrf = ${id}`;
    expect(stored.length).toBe(0);
    const hash = createHash('sha256').update(id).digest('hex');
    expect((await s.db.sql`select 1 from console_sessions where id_sha256 = ${hash}`).length).toBe(1);
  });
});

describe('a sub-merchant page', () => {
  it('lists its payouts with what the bank did, as the payout matching states them', async () => {
    const store = createPostgresEventStore(s.db.sql);
    const head = (await store.headPosition())!;
    const day = await cutDay(store, head, 'Europe/Kyiv');
    // the bank settings the console is served with (recon demo --serve): its payouts' due days decide missing
    const all = (await payoutStatusesAt(s.db.sql, head, demoBankConfig().payouts, day)) ?? [];
    expect(all.length).toBeGreaterThan(0);
    // the sub-merchant with the most payouts of the demo (some paid, some not)
    const count = new Map<string, number>();
    for (const l of all) count.set(l.subMerchantId, (count.get(l.subMerchantId) ?? 0) + 1);
    const id = [...count].sort((a, b) => b[1] - a[1])[0]![0];
    const page = await (
      await get(`/console/sub-merchants/${encodeURIComponent(id)}`, await login(s.tokens.admin))
    ).text();
    expect(page).toContain('Payouts and what the bank did');
    for (const l of all.filter((x) => x.subMerchantId === id)) {
      const row = new RegExp(
        `<tr><td>${l.month}</td><td>${l.reference}</td><td>${l.currency}</td>[\\s\\S]*?<td>${l.status}</td>`,
      );
      expect(page, l.reference).toMatch(row);
    }
    for (const l of all.filter((x) => x.subMerchantId !== id)) expect(page).not.toContain(`<td>${l.reference}</td>`);
  });
});

const ALL: QueueFilter = {
  legs: ['psp', 'orders', 'payouts', 'settlement'],
  type: null,
  status: null,
  assignee: null,
  severity: null,
  subMerchant: null,
  currency: null,
  minAmount: null,
  olderThanDays: null,
  order: 'asc',
  after: null,
};

describe('the queue in PostgreSQL', () => {
  it("shows the core's amount in doubt, equal to amountInDoubt, for every discrepancy of the demo", async () => {
    const rows = await s.db.sql<Record<string, unknown>[]>`
      select * from ${s.db.sql.unsafe(await allDiscrepancies(s.db.sql))}`;
    expect(rows.length).toBeGreaterThan(20);
    const page = await queuePage(s.db.sql, { ...ALL, status: null }, new Date(), 10_000);
    const shown = new Map(page.rows.map((r) => [r.id, r.amount]));
    expect(shown.size).toBe(rows.length);
    for (const r of rows) expect(shown.get(String(r.id)), String(r.type)).toBe(amountInDoubt(toRecord(r)));
    // the SQL copy of the rule is gone (migration 2710)
    const [fn] = await s.db.sql`select to_regprocedure('console_amount_in_doubt(text, jsonb)') as f`;
    expect(fn!.f).toBeNull();
  });

  it('filters by severity as severityOf computes it, in PostgreSQL', async () => {
    const now = new Date();
    const all = (await queuePage(s.db.sql, { ...ALL, status: null }, now, 10_000)).rows;
    const seen = new Set<string>();
    for (const severity of SEVERITIES) {
      const got = (await queuePage(s.db.sql, { ...ALL, status: null, severity }, now, 10_000)).rows;
      const want = all.filter(
        (r) =>
          severityOf(
            { type: r.type, values: r.values, currency: r.currency, detected_at: r.detected_at.toISOString() },
            now,
          ) === severity,
      );
      expect(got.map((r) => r.id).sort(), severity).toEqual(want.map((r) => r.id).sort());
      for (const r of got) seen.add(r.id);
    }
    expect(seen.size).toBe(all.length);
  });

  it('pages by keyset through exactly the rows of one query, in both orders, with every filter applied', async () => {
    const all = ALL;
    for (const order of ['asc', 'desc'] as const) {
      const whole = await queuePage(s.db.sql, { ...all, order }, new Date(), 10_000);
      const paged = [];
      let after: QueueFilter['after'] = null;
      for (;;) {
        const p = await queuePage(s.db.sql, { ...all, order, after }, new Date(), 7);
        paged.push(...p.rows);
        if (!p.more) break;
        const last = p.rows[p.rows.length - 1]!;
        after = { at: last.detected_at, id: last.id };
      }
      expect(paged.map((r) => r.id)).toEqual(whole.rows.map((r) => r.id));
      expect(new Set(paged.map((r) => r.id)).size).toBe(paged.length);
    }
    const some = (await queuePage(s.db.sql, all, new Date(), 10_000)).rows;
    // the median amount of the open UAH rows: some are at or above it whatever the scenario draws
    const withAmount = some
      .filter((r) => r.amount !== null && r.currency === 'UAH' && r.status === 'open')
      .map((r) => r.amount!)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const min = withAmount[Math.floor(withAmount.length / 2)]!;
    const filtered = await queuePage(
      s.db.sql,
      { ...all, currency: 'UAH', minAmount: min, status: 'open' },
      new Date(),
      10_000,
    );
    expect(filtered.rows.length).toBeGreaterThan(0);
    expect(filtered.rows.map((r) => r.id).sort()).toEqual(
      some
        .filter((r) => r.currency === 'UAH' && r.status === 'open' && r.amount !== null && r.amount >= min)
        .map((r) => r.id)
        .sort(),
    );
  });
});

const HOSTILE = [
  '<script>window.__pwned = 1</script>',
  `"'><img src=x onerror="window.__pwned = 2">`,
  '\u202Egnp.exe — RTL override',
  `</td></tr></table><form action="https://example.invalid"><button>x</button></form>`,
  'A'.repeat(10_000),
];

async function addHostileSubMerchants(): Promise<void> {
  const store = createPostgresEventStore(s.db.sql);
  for (const [i, name] of HOSTILE.entries()) {
    const subMerchantId = `hostile-${i}`;
    await store.append(subMerchantStream(subMerchantId), [
      newEvent(SubMerchantRegistered, { subMerchantId, name, reserveHoldDays: 7 }),
    ]);
  }
}

describe.skipIf(!hasChromium)('in a real browser (Debian chromium)', () => {
  let browser: Browser;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function signedIn(token: string, locale = 'en-GB'): Promise<Page> {
    const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${s.url}/console`);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    await page.waitForURL(`${s.url}/console`);
    return page;
  }

  /** No serious or critical axe violation, and every control reachable with Tab alone. */
  async function checkPage(page: Page, shot: string | null): Promise<void> {
    const axe = await new AxeBuilder({ page }).analyze();
    const bad = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    // every control marks itself when focus reaches it; then Tab from the top, once per control and a few more
    const controls = await page.evaluate<number>(`(() => {
      const all = document.querySelectorAll(${JSON.stringify(CONTROLS)});
      document.addEventListener('focusin', (e) => { e.target.dataset.tabbed = '1'; });
      document.activeElement && document.activeElement.blur();
      return all.length;
    })()`);
    for (let i = 0; i < controls + 3; i++) await page.keyboard.press('Tab');
    const missed = await page.evaluate<string[]>(`[...document.querySelectorAll(${JSON.stringify(CONTROLS)})]
      .filter((e) => e.dataset.tabbed !== '1').map((e) => e.outerHTML.slice(0, 120))`);
    expect(missed).toEqual([]);
    if (shot) await page.screenshot({ path: path.join(SHOTS, `${shot}.png`) });
  }

  it('logs in, shows every page without an accessibility fault, all reachable by keyboard', async () => {
    const page = await signedIn(s.tokens.admin);
    await checkPage(page, 'overview');
    expect(await page.textContent('main')).toContain('Match rate per leg');
    for (const [link, shot] of [
      ['Exceptions', 'exceptions'],
      ['Sub-merchants', 'sub-merchants'],
      ['Statements', 'statements'],
      ['Jobs', 'jobs'],
    ] as const) {
      await page.click(`nav >> text=${link}`);
      await page.waitForSelector(`h1:text("${link}")`);
      await checkPage(page, shot);
    }
    await page.context().close();
  }, 300_000);

  it('filters the queue, opens a payment and its timeline', async () => {
    const page = await signedIn(s.tokens.analyst);
    await page.click('nav >> text=Exceptions');
    await page.selectOption('select[name=leg]', 'psp');
    await page.selectOption('select[name=status]', '');
    await page.click('form[role=search] button[type=submit]');
    await page.waitForURL(/leg=psp/);
    const legs = await page.$$eval('#queue tbody tr td:nth-child(2)', (tds) => tds.map((t) => t.textContent));
    expect(legs.length).toBeGreaterThan(3);
    expect(new Set(legs)).toEqual(new Set(['PSP sources']));
    const link = page.locator('#queue a[href^="/console/payment/"]').first();
    const paymentId = (await link.textContent())!.trim();
    await link.click();
    await page.waitForSelector('h1:text("Payment")');
    expect(await page.textContent('h1')).toContain(paymentId);
    expect(await page.textContent('main')).toContain('RegisterRecordObserved');
    await checkPage(page, 'payment');
    // without JavaScript the same pages work: plain links and forms
    const noJs = await browser.newContext({ javaScriptEnabled: false });
    const p2 = await noJs.newPage();
    await p2.goto(`${s.url}/console/login`);
    await p2.fill('#token', s.tokens.analyst);
    await p2.click('button[type=submit]');
    await p2.waitForURL(`${s.url}/console`);
    await p2.goto(`${s.url}/console/exceptions?leg=settlement&status=`);
    expect(await p2.$$eval('#queue tbody tr', (r) => r.length)).toBeGreaterThan(0);
    await noJs.close();
    await page.context().close();
  }, 300_000);

  it('downloads a statement PDF, byte for byte the one written', async () => {
    const page = await signedIn(s.tokens.admin);
    await page.click('nav >> text=Statements');
    const pdf = page.locator('a[href*=".pdf"]').first();
    const name = (await pdf.textContent())!.trim();
    const [download] = await Promise.all([page.waitForEvent('download'), pdf.click()]);
    const saved = await download.path();
    const bytes = readFileSync(saved);
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(bytes.equals(readFileSync(path.join(s.outDir, name)))).toBe(true);
    expect(readdirSync(s.outDir)).toContain(name);
    // a name no run recorded, or a path, is not served
    for (const bad of ['../etc/passwd', 'payouts-2026-10.xlsx.bak', '.env'])
      expect(
        (await page.request.get(`${s.url}/console/statements/file?name=${encodeURIComponent(bad)}`)).status(),
      ).toBe(404);
    await page.context().close();
  }, 120_000);

  it('lets an administrator run a job now (a POST with the CSRF token); the run is recorded as manual', async () => {
    const page = await signedIn(s.tokens.admin);
    await page.click('nav >> text=Jobs');
    await page.click('button[aria-label="Run now: nightly-reconciliation"]');
    await page.waitForURL(/started=nightly-reconciliation/);
    expect(await page.textContent('[role=status]')).toContain('nightly-reconciliation');
    await expect
      .poll(async () => (await s.db.sql`select 1 from job_runs where trigger = 'manual'`).length, { timeout: 60_000 })
      .toBeGreaterThan(0);
    await page.context().close();
  }, 120_000);

  it('shows a viewer no action button anywhere', async () => {
    const page = await signedIn(viewer);
    for (const p of [
      '/console',
      '/console/exceptions',
      '/console/jobs',
      '/console/statements',
      '/console/sub-merchants',
      '/console/payout-runs',
    ]) {
      await page.goto(`${s.url}${p}`);
      const actions = await page.$$eval('form[method=post]', (fs) => fs.map((f) => f.getAttribute('action')));
      expect(
        actions.filter((a) => a !== '/console/logout' && a !== '/console/language'),
        p,
      ).toEqual([]);
    }
    await page.goto(`${s.url}/console/jobs`);
    await page.screenshot({ path: path.join(SHOTS, 'jobs-viewer.png') });
    await page.context().close();
  }, 120_000);

  it('renders a hostile corpus as text: no element or script injected, every string visible', async () => {
    await addHostileSubMerchants();
    const page = await signedIn(s.tokens.admin);
    await expect
      .poll(
        async () => {
          await page.goto(`${s.url}/console/sub-merchants`);
          return page.locator('text=hostile-4').count();
        },
        { timeout: 60_000 },
      )
      .toBe(1);
    const check = async () => {
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('script:not([src="/console/assets/htmx.min.js"])').count()).toBe(0);
      expect(await page.locator('form[action="https://example.invalid"]').count()).toBe(0);
      const text = (await page.textContent('main'))!;
      for (const h of HOSTILE) expect(text).toContain(h);
    };
    await check();
    await checkPage(page, null);
    for (let i = 0; i < HOSTILE.length; i++) {
      await page.goto(`${s.url}/console/sub-merchants/hostile-${i}`);
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      expect(await page.textContent('main')).toContain(HOSTILE[i]!);
      expect(await page.locator('img').count()).toBe(0);
    }
    // from a request: NUL, bidi and markup in filters and references come back as a message, not as markup
    for (const q of ['sub_merchant=%00x', 'currency=%3Cscript%3E', `sub_merchant=${encodeURIComponent(HOSTILE[1]!)}`]) {
      await page.goto(`${s.url}/console/exceptions?${q}`);
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      expect(await page.locator('img').count()).toBe(0);
    }
    await page.goto(`${s.url}/console/payment/${encodeURIComponent(HOSTILE[0]!)}`);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await page.context().close();
  }, 180_000);

  it("speaks Ukrainian from Accept-Language or by choice, with money in the currency's own format", async () => {
    const page = await signedIn(s.tokens.admin, 'uk-UA');
    expect(await page.textContent('h1')).toBe('Огляд');
    expect(await page.textContent('main')).toMatch(/\d[\d\u00a0\u202f ]*,\d\d\u00a0₴/);
    await checkPage(page, 'overview-uk');
    await page.click('header button:text("English")');
    await page.waitForSelector('h1:text("Overview")');
    await page.click('header button:text("Українська")');
    await page.waitForSelector('h1:text("Огляд")');
    await page.context().close();
  }, 120_000);

  it('logs out: the page asks for a token again', async () => {
    const page = await signedIn(s.tokens.analyst);
    await page.click('button:text("Log out")');
    await page.waitForURL(`${s.url}/console/login`);
    await page.goto(`${s.url}/console/jobs`);
    expect(page.url()).toBe(`${s.url}/console/login`);
    await page.screenshot({ path: path.join(SHOTS, 'login.png') });
    await page.context().close();
  }, 60_000);
});

describe('login rate limit', () => {
  // last: the limit is per client address, and every test here comes from the loopback
  it('answers 429 after five failed logins from one address, even to the right token', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (
          await fetch(`${s.url}/console/login`, {
            method: 'POST',
            body: new URLSearchParams({ token: `recon_wrong${i}` }),
          })
        ).status,
      );
    const limited = await fetch(`${s.url}/console/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: s.tokens.admin }),
      redirect: 'manual',
    });
    expect(statuses.slice(0, 1)).toEqual([401]);
    expect(statuses.every((x) => x === 401 || x === 429)).toBe(true);
    expect(limited.status).toBe(429);
  });
});

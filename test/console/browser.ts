import os from 'node:os';
import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's chromium for the console's browser tests, and the checks every page passes (axe, keyboard). */

export const CHROMIUM = '/usr/bin/chromium';
/**
 * Where the tests' screenshots go: docs/console/ when RECON_UPDATE_SCREENSHOTS=1 (the docs' pictures, taken
 * anew on purpose), else a temporary directory, so that a test run leaves the checkout as it found it.
 */
export const SHOTS =
  process.env['RECON_UPDATE_SCREENSHOTS'] === '1'
    ? path.resolve(__dirname, '../../docs/console')
    : path.join(os.tmpdir(), 'recon-console-screenshots');
const CONTROLS = 'a[href], button, input:not([type=hidden]), select, textarea';

export const launch = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });

export async function signedIn(browser: Browser, url: string, token: string): Promise<Page> {
  const context = await browser.newContext({
    locale: 'en-GB',
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
  const page = await context.newPage();
  await page.goto(`${url}/console`);
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForURL(`${url}/console`);
  return page;
}

/** No serious or critical axe violation, every control reachable with Tab alone; a screenshot when named. */
export async function checkPage(page: Page, shot: string | null): Promise<void> {
  const axe = await new AxeBuilder({ page }).analyze();
  const bad = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
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
  if (shot) await page.screenshot({ path: path.join(SHOTS, `${shot}.png`), fullPage: true });
}

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import type { BankConfig } from '../../src/config/bank';
import { bankConfigFromEnv } from '../../src/config/bank-from-env';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { useTestStore } from '../support/db';
import { appendAll, bank, booked, PAYOUTS_ACCOUNT, payouts, TZ } from './support';

/**
 * The payouts projection takes its bank settings from its build (the runner's, recorded with the build)
 * and from nowhere else: a runner given none books no payouts account, even when RECON_CONFIG names one.
 */
describe("payouts projection: the build's bank settings are its only source", () => {
  const fx = useTestStore();
  const saved = { ...process.env };
  afterAll(() => {
    process.env = saved;
  });

  async function project(settings: BankConfig | undefined): Promise<void> {
    const deps = {
      sql: fx.db.sql,
      store: fx.store,
      log: silentLogger,
      timezone: TZ,
      graceHours: 48,
      projections: [payouts],
      ...(settings ? { bank: settings } : {}),
    };
    for (let attempt = 0; attempt < 200; attempt++) {
      const report = await runProjections(deps, { batchSize: 1000 });
      if (report.projections.every((p) => p.position === report.head)) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  const lines = async () => (await fx.db.sql<{ n: number }[]>`select count(*)::int as n from recon.payout_lines`)[0]!.n;

  it('books the lines of a payouts account only when the build was given it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'recon-payouts-settings-'));
    const config = path.join(dir, 'recon-config.json');
    writeFileSync(
      config,
      JSON.stringify({ bank: { accounts: [{ id: PAYOUTS_ACCOUNT, currency: 'EUR', role: 'payouts' }] } }),
    );
    process.env = reconEnv({ databaseUrl: fx.db.url, timezone: TZ, extra: { RECON_CONFIG: config } });
    // RECON_CONFIG does name the account: what the projection used to fall back to
    expect(bankConfigFromEnv().accounts.map((a) => a.id)).toEqual([PAYOUTS_ACCOUNT]);

    await appendAll(fx.store, [booked({ bankRef: 'only-1', amount: 100_00n, bookingDate: '2026-11-03' })]);
    await project(undefined);
    expect(await lines()).toBe(0);
    // given the settings, a new build replaces the one without them and books the line
    await project(bank);
    expect(await lines()).toBe(1);
  });
});

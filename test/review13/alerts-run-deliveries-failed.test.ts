import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, spawnRecon } from '../faults/support/processes';
import { addBreak, discrepancyTable } from '../alerts/support';

/**
 * `recon alerts run` (and `recon run alerts`) when no delivery went out: the channel refuses the connection.
 * The alert is raised, its delivery recorded failed (tried again later), and the command exited 0, the job
 * recorded `succeeded`: a cron entry or supervisor running it could not tell "sent" from "nothing sent".
 * README, exit 1: "the command ran, but some of its items failed (… mails not sent …)"; `recon alerts test`
 * and `recon statements send` exit 1 for the same.
 */

const tmp = mkdtempSync(path.join(tmpdir(), 'r13-alerts-run-'));
const configFile = path.join(tmp, 'recon.json');
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  writeFileSync(
    configFile,
    JSON.stringify({
      alerts: {
        channels: { team: { type: 'slack', url: 'env:R13_SLACK_URL' } },
        rules: [{ name: 'shorts', on: 'discrepancy', match: { types: ['settlement_short'] }, channels: ['team'] }],
      },
    }),
  );
  await discrepancyTable(db.sql);
  await addBreak(db.sql, {
    type: 'settlement_short',
    values: { shortfall: '4200' },
    currency: 'UAH',
    detectedAt: new Date(Date.now() - 3_600_000).toISOString(),
  });
});
afterAll(async () => {
  await killAll();
  await db?.drop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('recon alerts run with every delivery failing', () => {
  it('exits 1', { timeout: 120_000 }, async () => {
    const p = spawnRecon(
      ['alerts', 'run'],
      reconEnv({
        databaseUrl: db.url,
        extra: { RECON_CONFIG: configFile, R13_SLACK_URL: 'http://127.0.0.1:9/services/T000/B000/XXXX' },
      }),
    );
    const { code } = await p.exited;
    expect(p.stdout()).toMatch(/raised 1 alert/);
    expect(p.stdout()).toMatch(/attempt 1 {2}failed/);
    expect(code).toBe(1);
  });
});

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { loadConfig, secretValues } from '../../src/config/env';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { slackReceiver } from './receivers';
import { addBreak, discrepancyTable } from './support';

/** `recon alerts run [--dry-run]` and `recon alerts list` through the real binary, rules from RECON_CONFIG. */

const BIN = path.resolve('bin/recon.mjs');
const tmp = mkdtempSync(path.join(tmpdir(), 'recon-alerts-cli-'));
const configFile = path.join(tmp, 'recon.json');
let db: TestDatabase;
let slack: Awaited<ReturnType<typeof slackReceiver>>;
let env: Record<string, string>;

beforeAll(async () => {
  db = await createTestDatabase();
  slack = await slackReceiver();
  env = { RECON_CONFIG: configFile, RECON_TEST_SLACK_URL: slack.url, RECON_LOG_LEVEL: 'info' };
  writeFileSync(
    configFile,
    JSON.stringify({
      alerts: {
        channels: { team: { type: 'slack', url: 'env:RECON_TEST_SLACK_URL' } },
        rules: [
          { name: 'short-settlements', on: 'discrepancy', match: { types: ['settlement_short'] }, channels: ['team'] },
        ],
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
  await slack.close();
  await db.drop();
  rmSync(tmp, { recursive: true, force: true });
});

function recon(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: reconEnv({ databaseUrl: db.url, extra: env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('recon alerts', () => {
  it('reads the rules from RECON_CONFIG and counts the Slack URL among the secrets', () => {
    const c = loadConfig({ RECON_CONFIG: configFile, RECON_TEST_SLACK_URL: slack.url });
    expect(c.ok).toBe(true);
    if (!c.ok) return;
    expect(c.config.alerts?.rules.map((r) => r.name)).toEqual(['short-settlements']);
    expect(secretValues(c.config)).toContain(slack.url);
  });

  it('a dry run lists what would be raised and sends nothing; the run raises and sends once; list shows it', async () => {
    const dry = await recon(['alerts', 'run', '--dry-run']);
    expect({ code: dry.code, stderr: dry.stderr }).toMatchObject({ code: 0 });
    expect(dry.stdout).toMatch(
      /^would raise 1 alert\n {2}[0-9a-f-]{36} {2}short-settlements {2}discrepancy {2}New exception: settlement short\n/,
    );
    expect(slack.texts).toEqual([]);
    expect(await db.sql`select alert_id from alerts`).toHaveLength(0);

    const run = await recon(['alerts', 'run']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^raised 1 alert\n/);
    expect(run.stdout).toMatch(/team {2}attempt 1 {2}sent\n$/);
    expect(slack.texts).toHaveLength(1);
    expect(slack.texts[0]).toContain('42.00 UAH');
    // neither the Slack URL nor its path (the token) is ever printed or logged
    for (const out of [dry, run]) expect(out.stdout + out.stderr).not.toContain('/services/T000');

    const again = await recon(['alerts', 'run']);
    expect(again.stdout).toBe('raised 0 alerts\ndeliveries: 0\n');
    expect(slack.texts).toHaveLength(1);

    const list = await recon(['alerts', 'list', '--format', 'json']);
    const alerts = JSON.parse(list.stdout) as Array<{ rule: string; kind: string; deliveries: unknown[] }>;
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      rule: 'short-settlements',
      kind: 'discrepancy',
      deliveries: [{ channel: 'team', attempts: 1, sent: true, givenUp: false }],
    });
  }, 300_000);

  it('recon alerts test RULE sends a test alert to its channels, recording nothing; an unknown rule is refused', async () => {
    const t = await recon(['alerts', 'test', 'short-settlements']);
    expect({ code: t.code, stdout: t.stdout }, t.stderr).toEqual({ code: 0, stdout: 'team: sent (HTTP 200)\n' });
    expect(slack.texts.at(-1)).toBe(
      '*Test alert of rule short-settlements*\nThis is a test of the alert rule short-settlements (discrepancy); nothing needs doing.',
    );
    expect(await db.sql`select alert_id from alerts`).toHaveLength(1);
    const unknown = await recon(['alerts', 'test', 'no-such-rule']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no alert rule named no-such-rule (rules: short-settlements)');
  }, 300_000);
});

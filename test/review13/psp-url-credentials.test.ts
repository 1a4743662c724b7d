import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { loadConfig } from '../../src/config/env';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { killAll, spawnRecon } from '../faults/support/processes';

/**
 * PSP_BASE_URL (or PSP_REPORT_URL) with a user name and password in it (a proxy's basic auth). The check
 * accepted it (recon config exit 0, the password shown as ***); fetch refuses every request to a URL with
 * credentials, so every PSP call of the sync failed as "PSP_NETWORK: PSP unreachable on POST
 * /streaming-report/start: TypeError", the nightly run failing night after night without naming the cause
 * (the transport kept fetch's message, which quotes the URL, out of it: the password leaked nowhere).
 * Refused at start instead, naming the variable.
 */

const PASSWORD = 'PspProxyPass_77';
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await killAll();
  await db?.drop();
});

const project = {
  name: 'default',
  posId: '11111111-2222-3333-4444-555555555555',
  baseUrl: `http://proxyuser:${PASSWORD}@127.0.0.1:9/`,
  reportUrl: `http://proxyuser:${PASSWORD}@127.0.0.1:9/`,
  apiKey: 'key_abcdefghijkl',
  apiSecret: 'secret_abcdefghijkl',
  endpointsKey: 'endpoints_abcdefghijkl',
  authScheme: 'PAY',
};

describe('a PSP URL with credentials', () => {
  it('is refused by the configuration check, naming PSP_BASE_URL', () => {
    const r = loadConfig({
      PSP_BASE_URL: project.baseUrl,
      PSP_REPORT_URL: 'http://127.0.0.1:9/',
      PSP_POS_ID: project.posId,
      PSP_API_KEY: project.apiKey,
      PSP_API_SECRET: project.apiSecret,
      PSP_ENDPOINTS_KEY: project.endpointsKey,
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.variable)).toContain('PSP_BASE_URL');
  });

  it('a project of RECON_CONFIG with one is refused too, without the password', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'r13-psp-url-')), 'recon.json');
    const { authScheme: _, ...fileProject } = project;
    writeFileSync(file, JSON.stringify({ projects: [fileProject] }));
    const r = loadConfig({ RECON_CONFIG: file });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issues.map((i) => i.problem).join('\n')).toContain('projects.0.baseUrl');
      expect(JSON.stringify(r.issues)).not.toContain(PASSWORD);
    }
  });

  it('recon run nightly-reconciliation: refused (78), the password nowhere', { timeout: 120_000 }, async () => {
    const p = spawnRecon(
      ['run', 'nightly-reconciliation'],
      reconEnv({
        databaseUrl: db.url,
        project,
        extra: { RECON_REPORT_MAX_WAIT_MS: '1000', RECON_PSP_TIMEOUT_MS: '500', RECON_OUT_DIR: '/nonexistent/r13' },
      }),
    );
    const { code } = await p.exited;
    const stored = await db.sql`select data::text as d from es_events where data::text like ${`%${PASSWORD}%`}`;
    const runs = await db.sql`select error from job_runs where error like ${`%${PASSWORD}%`}`;
    expect({
      inOutput: (p.stdout() + p.stderr()).includes(PASSWORD),
      inEvents: stored.length,
      inJobRuns: runs.length,
    }).toEqual({ inOutput: false, inEvents: 0, inJobRuns: 0 });
    expect(code).toBe(78);
    expect(p.stderr()).toContain('PSP_BASE_URL');
  });
});

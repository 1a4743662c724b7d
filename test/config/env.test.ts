import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stopBounds } from '../../src/cli/shutdown';
import {
  VARIABLES,
  formatConfigIssues,
  loadConfig,
  requireConfig,
  secretValues,
  type ConfigResult,
} from '../../src/config/env';

const dir = mkdtempSync(path.join(tmpdir(), 'recon-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const POS_TEST = '11111111-2222-4333-8444-555555555555';
const POS_LIVE = '66666666-7777-4888-9999-aaaaaaaaaaaa';

const psp = {
  PSP_BASE_URL: 'https://api.psp.example',
  PSP_REPORT_URL: 'https://report.psp.example',
  PSP_POS_ID: POS_TEST,
  PSP_API_KEY: 'pk_env_key_1234',
  PSP_API_SECRET: 'sk_env_secret_5678',
  PSP_ENDPOINTS_KEY: 'ek_env_endpoints_90',
};

function failed(r: ConfigResult) {
  if (r.ok) throw new Error('expected the configuration to be refused');
  return { issues: r.issues, message: formatConfigIssues(r.issues) };
}

function writeProjects(name: string, content: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('configuration defaults', () => {
  it('gives every documented default when nothing is set', () => {
    const r = loadConfig({});
    if (!r.ok) throw new Error(formatConfigIssues(r.issues));
    const c = r.config;
    expect(c.databaseUrl).toBeUndefined();
    expect(c.eventStoreUrl).toBeUndefined();
    expect(c.dataDir).toBe(path.resolve('./.recon'));
    expect(c.timezone).toBe('UTC');
    expect(c.projects).toEqual([]);
    expect(c.subMerchantsPath).toBeUndefined();
    expect(c.graceHours).toBe(48);
    expect(c.lookbackDays).toBe(3);
    expect(c.logLevel).toBe('info');
    expect(c.reportPollMaxWaitMs).toBe(600_000);
    expect(c.pspTimeoutMs).toBe(30_000);
    expect(c.webhook).toEqual({ allowedIps: [], trustProxy: false, trustedProxies: [], maxBodyBytes: 65_536 });
    expect(c.auditorToken).toBeUndefined();
    expect(c.schedules).toEqual({
      nightly: '30 2 * * *',
      monthly: '0 6 1 * *',
      healing: '15 * * * *',
      alerts: '*/15 * * * *',
    });
    expect(c.metricsToken).toBeUndefined();
    expect(c.alerts?.rules).toEqual([]);
    expect(c.outDir).toBe(path.resolve('./out'));
  });

  it('documents every variable with a default, an example and a meaning, and the numeric defaults match', () => {
    const names = VARIABLES.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of [
      'DATABASE_URL',
      'EVENTSTORE_URL',
      'RECON_DATA_DIR',
      'RECON_TIMEZONE',
      'PSP_BASE_URL',
      'PSP_REPORT_URL',
      'PSP_POS_ID',
      'PSP_API_KEY',
      'PSP_API_SECRET',
      'PSP_ENDPOINTS_KEY',
      'RECON_SUB_MERCHANTS',
      'RECON_GRACE_HOURS',
      'RECON_CONFIG',
    ]) {
      expect(names).toContain(name);
    }
    for (const v of VARIABLES) {
      expect(v.default, v.name).not.toBe('');
      expect(v.example, v.name).not.toBe('');
      expect(v.meaning, v.name).not.toBe('');
    }
    const doc = (n: string) => VARIABLES.find((v) => v.name === n)!.default;
    const c = requireConfig({});
    expect(doc('RECON_GRACE_HOURS')).toBe(String(c.graceHours));
    expect(doc('RECON_TIMEZONE')).toBe(c.timezone);
    expect(path.resolve(doc('RECON_DATA_DIR'))).toBe(c.dataDir);
    expect(doc('RECON_LOOKBACK_DAYS')).toBe(String(c.lookbackDays));
    expect(doc('WEBHOOK_MAX_BODY_BYTES')).toBe(String(c.webhook.maxBodyBytes));
    expect(doc('RECON_HEAL_CONCURRENCY')).toBe(String(c.healConcurrency));
  });

  it("accepts every variable's documented example", () => {
    const env: Record<string, string> = {};
    for (const v of VARIABLES)
      if (v.name !== 'RECON_CONFIG' && v.name !== 'RECON_SUB_MERCHANTS') env[v.name] = v.example;
    const r = loadConfig(env);
    if (!r.ok) throw new Error(formatConfigIssues(r.issues));
    expect(r.config.timezone).toBe('Europe/Kyiv');
    expect(r.config.graceHours).toBe(72);
    expect(r.config.projects).toHaveLength(1);
    expect(r.config.projects[0]).toMatchObject({ name: 'live', posId: '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f' });
    expect(r.config.webhook).toEqual({
      allowedIps: ['203.0.113.10', '127.0.0.1'],
      trustProxy: true,
      trustedProxies: ['10.0.0.5'],
      maxBodyBytes: 131_072,
    });
  });

  it('refuses a stop grace that is not whole milliseconds at start, naming RECON_STOP_GRACE_MS', () => {
    for (const bad of ['5s', '-1', '1.5', '99999999999']) {
      const r = loadConfig({ ...psp, RECON_STOP_GRACE_MS: bad });
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.issues.map((i) => i.variable)).toContain('RECON_STOP_GRACE_MS');
    }
    expect(loadConfig({ ...psp, RECON_STOP_GRACE_MS: '5000' }).ok).toBe(true);
    expect(VARIABLES.map((v) => v.name)).toContain('RECON_STOP_GRACE_MS');
  });

  it('reads the stop grace at a stop as the check at start does: blank is the default, not 0 ms', () => {
    const defaults = { graceMs: 15_000, hardMs: 10_000 };
    for (const blank of ['', ' ']) {
      expect(loadConfig({ ...psp, RECON_STOP_GRACE_MS: blank }).ok).toBe(true);
      expect(stopBounds(defaults, { RECON_STOP_GRACE_MS: blank })).toEqual(defaults);
    }
    expect(stopBounds(defaults, { RECON_STOP_GRACE_MS: ' 5000 ' })).toEqual({ ...defaults, graceMs: 5000 });
    expect(stopBounds(defaults, {})).toEqual(defaults);
  });

  it('reads one PSP project from the PSP_* variables', () => {
    const c = requireConfig({ ...psp, RECON_GRACE_HOURS: '12', RECON_TIMEZONE: 'Europe/Kyiv' });
    expect(c.projects).toEqual([
      {
        name: 'default',
        posId: POS_TEST,
        baseUrl: psp.PSP_BASE_URL,
        reportUrl: psp.PSP_REPORT_URL,
        apiKey: psp.PSP_API_KEY,
        apiSecret: psp.PSP_API_SECRET,
        endpointsKey: psp.PSP_ENDPOINTS_KEY,
        authScheme: 'PAY',
      },
    ]);
    expect(c.graceHours).toBe(12);
    expect(secretValues(c)).toEqual(
      expect.arrayContaining([psp.PSP_API_KEY, psp.PSP_API_SECRET, psp.PSP_ENDPOINTS_KEY]),
    );
  });
});

describe('a bad or missing configuration', () => {
  it('names every offending variable in one message, with what was expected and an example', () => {
    const { issues, message } = failed(
      loadConfig({
        RECON_TIMEZONE: 'Mars/Olympus',
        RECON_GRACE_HOURS: 'two days',
        RECON_LOG_LEVEL: 'loud',
        WEBHOOK_ALLOWED_IPS: '10.0.0.1,not-an-ip',
        WEBHOOK_TRUST_PROXY: 'maybe',
        EVENTSTORE_URL: 'http://localhost:2113',
        PSP_BASE_URL: 'ftp://psp.example',
        PSP_POS_ID: 'not-a-uuid',
      }),
    );
    const named = new Set(issues.map((i) => i.variable));
    for (const v of [
      'RECON_TIMEZONE',
      'RECON_GRACE_HOURS',
      'RECON_LOG_LEVEL',
      'WEBHOOK_ALLOWED_IPS',
      'WEBHOOK_TRUST_PROXY',
      'EVENTSTORE_URL',
      'PSP_BASE_URL',
      'PSP_POS_ID',
      'PSP_REPORT_URL',
      'PSP_API_KEY',
      'PSP_API_SECRET',
      'PSP_ENDPOINTS_KEY',
    ]) {
      expect(named, v).toContain(v);
    }
    // One message, one line per problem, each with the expectation and an example assignment.
    expect(message.split('\n')[0]).toBe(`recon cannot start: ${issues.length} configuration problems`);
    expect(message.split('\n')).toHaveLength(issues.length + 1);
    expect(message).toContain(
      'RECON_TIMEZONE: expected an IANA time zone name, got "Mars/Olympus" (example: RECON_TIMEZONE=Europe/Kyiv)',
    );
    expect(message).toContain(
      'RECON_GRACE_HOURS: expected a whole number from 0 to 8760, got "two days" (example: RECON_GRACE_HOURS=72)',
    );
    expect(message).toContain(
      'PSP_API_KEY: missing: the PSP_* variables are given together (example: PSP_API_KEY=pk_test_123)',
    );
    expect(message).toMatch(/EVENTSTORE_URL: expected a URL starting with esdb:\/\//);
    expect(message).toMatch(/PSP_POS_ID: expected an id of 8-4-4-4-12 hex digits/);
    for (const i of issues) {
      expect(i.problem, i.variable).toMatch(/expected|missing|not an IP/);
      expect(i.example, i.variable).not.toBe('');
    }
  });

  it('never echoes a secret value', () => {
    const secrets = {
      PSP_API_KEY: 'pk_live_TOPSECRET_key',
      PSP_API_SECRET: 'sk_live_TOPSECRET_secret',
      PSP_ENDPOINTS_KEY: 'ek_live_TOPSECRET_endpoints',
      RECON_AUDITOR_TOKEN: 'shortTOKEN',
      DATABASE_URL: 'mysql://recon:db_TOPSECRET_pw@db.example/recon',
      EVENTSTORE_URL: 'http://admin:es_TOPSECRET_pw@localhost:2113',
    };
    // Every secret is present while something else is wrong (the PSP block is incomplete, the URLs are bad).
    const { issues, message } = failed(loadConfig({ ...secrets, PSP_BASE_URL: 'https://api.psp.example' }));
    expect(issues.map((i) => i.variable)).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'EVENTSTORE_URL', 'RECON_AUDITOR_TOKEN', 'PSP_POS_ID']),
    );
    expect(message).not.toMatch(/TOPSECRET|shortTOKEN/);
    expect(message).toContain('DATABASE_URL: expected a URL starting with postgres:// or postgresql://');
    expect(message).toContain('RECON_AUDITOR_TOKEN: expected at least 16 characters');
  });

  it('never echoes a secret from a project file that is not valid JSON', () => {
    const file = writeProjects('broken.json', '{"projects":[{"apiKey": sk_live_TOPSECRET_in_file}]}');
    const { issues, message } = failed(loadConfig({ RECON_CONFIG: file }));
    expect(issues).toHaveLength(1);
    expect(message).toContain(`RECON_CONFIG: ${file} is not valid JSON`);
    expect(message).not.toMatch(/sk_live|TOPSECRET/);
  });

  it('reports an unreadable project file', () => {
    const { message } = failed(loadConfig({ RECON_CONFIG: path.join(dir, 'absent.json') }));
    expect(message).toMatch(/RECON_CONFIG: cannot read .*absent\.json: ENOENT/);
  });
});

describe('the project file (several PSP projects)', () => {
  const project = (name: string, posId: string, secret: Record<string, string> = {}) => ({
    name,
    posId,
    baseUrl: `https://${name}.api.psp.example`,
    reportUrl: `https://${name}.report.psp.example`,
    apiKey: `pk_${name}_file_key`,
    apiSecret: `sk_${name}_file_secret`,
    endpointsKey: `ek_${name}_file_endpoints`,
    ...secret,
  });

  it('reads test and live projects, with secrets taken from the environment through env:NAME', () => {
    const file = writeProjects('projects.json', {
      projects: [
        project('test', POS_TEST),
        project('live', POS_LIVE, {
          apiKey: 'env:LIVE_KEY',
          apiSecret: 'env:LIVE_SECRET',
          endpointsKey: 'env:LIVE_EP',
        }),
      ],
    });
    const c = requireConfig({
      RECON_CONFIG: file,
      LIVE_KEY: 'pk_live_from_env',
      LIVE_SECRET: 'sk_live_from_env',
      LIVE_EP: 'ek_live_from_env',
    });
    expect(c.projects.map((p) => p.name)).toEqual(['test', 'live']);
    expect(c.projects[0]).toEqual({ ...project('test', POS_TEST), authScheme: 'PAY' });
    expect(c.projects[1]).toMatchObject({
      posId: POS_LIVE,
      apiKey: 'pk_live_from_env',
      apiSecret: 'sk_live_from_env',
      endpointsKey: 'ek_live_from_env',
    });
    // The resolved secrets are scrubbed from logs like the others.
    expect(secretValues(c)).toEqual(
      expect.arrayContaining(['pk_live_from_env', 'sk_live_from_env', 'pk_test_file_key']),
    );
  });

  it('adds the file projects to a project given by the PSP_* variables', () => {
    const file = writeProjects('live-only.json', { projects: [project('live', POS_LIVE)] });
    const c = requireConfig({ ...psp, PSP_PROJECT_NAME: 'test', RECON_CONFIG: file });
    expect(c.projects.map((p) => [p.name, p.posId])).toEqual([
      ['test', POS_TEST],
      ['live', POS_LIVE],
    ]);
  });

  it('refuses an env:NAME reference to an unset variable, naming the field and the variable', () => {
    const file = writeProjects('unset-ref.json', {
      projects: [project('live', POS_LIVE, { apiSecret: 'env:LIVE_SECRET_UNSET' })],
    });
    const { issues, message } = failed(loadConfig({ RECON_CONFIG: file }));
    expect(issues).toHaveLength(1);
    expect(message).toContain('projects.0.apiSecret refers to LIVE_SECRET_UNSET, which is not set in the environment');
  });

  it('names each bad field of the file without echoing its values', () => {
    const file = writeProjects('bad-fields.json', {
      projects: [
        { ...project('test', 'not-a-uuid'), baseUrl: 'not a url', apiKey: '' },
        project('test', POS_LIVE),
        null,
      ],
    });
    const { issues, message } = failed(loadConfig({ RECON_CONFIG: file }));
    expect(issues.every((i) => i.variable === 'RECON_CONFIG')).toBe(true);
    expect(message).toContain('projects.0.posId');
    expect(message).toContain('projects.0.baseUrl');
    expect(message).toContain('projects.0.apiKey');
    expect(message).toContain('projects.2');
    expect(message).not.toMatch(/file_key|file_secret|file_endpoints/);
  });

  it('refuses two projects with the same name or posId', () => {
    const file = writeProjects('repeat.json', { projects: [project('test', POS_TEST), project('test', POS_LIVE)] });
    const { message } = failed(loadConfig({ RECON_CONFIG: file }));
    expect(message).toContain('project test repeats a name or posId already configured');
  });
});

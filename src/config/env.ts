import { ReconError } from '../errors';
import { DEBTOR_VARIABLES, debtorIssues } from './payout-debtor';
import {
  defaultStatementWorkers,
  MAX_STATEMENT_WORKERS,
  STATEMENT_VARIABLES,
  type StatementsConfig,
  statementsConfigFrom,
} from './statements';
import { HOLD_POLICY_VARIABLES, holdPolicyFrom } from './hold-policy';
import { type BankConfig, EMPTY_BANK_CONFIG } from './bank';
import {
  authScheme,
  holdsCredentials,
  PSP_ID,
  type PspProject,
  readExceptionsSection,
  readProjectFile,
} from './project-file';
import type { ExceptionsConfig } from './exceptions';
import { type ConfigIssue, type EnvReader, envReader } from './reader';
import path from 'node:path';
import { timezoneProblem } from './timezone';
import { mailFromProblem } from './mail-from';
import cron from 'node-cron';
import { canonicalIp } from './ip-address';
import { urlPasswords } from '../url-passwords';
import { type AlertsConfig, alertSecrets, readAlertsConfig } from './alerts';

/**
 * Configuration from the environment (and an optional JSON file listing several PSP projects),
 * validated once at start-up. Every problem is collected so that one message names them all.
 */

export interface Config {
  readonly databaseUrl: string | undefined;
  readonly eventStoreUrl: string | undefined;
  readonly dataDir: string;
  readonly timezone: string;
  readonly projects: readonly PspProject[];
  readonly subMerchantsPath: string | undefined;
  readonly graceHours: number;
  readonly lookbackDays: number;
  readonly logLevel: LogLevel;
  readonly reportPollMaxWaitMs: number;
  readonly pspTimeoutMs: number;
  /** re-send requests `recon heal` keeps in flight at once per PSP project */
  readonly healConcurrency: number;
  /** worker threads writing statements at once (RECON_STATEMENT_WORKERS; 1: in the main thread) */
  readonly statementWorkers?: number;
  /** threads of one process a rebuild or the demo spreads the projections over (RECON_PROJECTION_THREADS) */
  readonly projectionThreads?: number;
  readonly webhook: {
    readonly allowedIps: readonly string[];
    readonly trustProxy: boolean;
    /** the proxies whose X-Forwarded-For is taken (empty: any peer's, when trustProxy) */
    readonly trustedProxies: readonly string[];
    readonly maxBodyBytes: number;
  };
  readonly auditorToken: string | undefined;
  /** bearer token of POST /api/orders (RECON_ORDERS_TOKEN); unset: the orders API is off */
  readonly ordersToken: string | undefined;
  /** the fee contract CSV (RECON_FEE_CONTRACT), imported by `recon fees import` */
  readonly feeContractPath: string | undefined;
  readonly schedules: {
    readonly nightly: string;
    readonly monthly: string;
    readonly healing: string;
    /** the alerts' evaluation (RECON_CRON_ALERTS); also run after every nightly run */
    readonly alerts?: string;
  };
  readonly outDir: string;
  /** bank accounts and the rules for matching money that moved (the `bank` object of RECON_CONFIG) */
  readonly bank: BankConfig;
  /** where statements are e-mailed from (unset: `recon statements send` is off) */
  readonly mail: { readonly smtpUrl: string; readonly from: string } | undefined;
  /** the issuer, contact and language of statements (src/config/statements.ts) */
  readonly statements?: StatementsConfig;
  /** alert rules and channels (the `alerts` object of RECON_CONFIG, src/config/alerts.ts) */
  readonly alerts?: AlertsConfig;
  /** bearer token of GET /metrics (RECON_METRICS_TOKEN); unset: /metrics answers loopback peers only */
  readonly metricsToken?: string | undefined;
  /** RECON_CONFIG's `exceptions` section: severity thresholds, SLA hours, write-offs (src/config/exceptions.ts) */
  readonly exceptions?: ExceptionsConfig;
}

/** The log levels, least to most quiet. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type { ConfigIssue, PspProject };

export type ConfigResult = { ok: true; config: Config } | { ok: false; issues: ConfigIssue[] };

/** Variables whose values are never echoed, in errors or anywhere else. */
export const SECRET_VARIABLES = [
  'PSP_API_KEY',
  'PSP_API_SECRET',
  'PSP_ENDPOINTS_KEY',
  'RECON_AUDITOR_TOKEN',
  'RECON_TOKEN',
  'RECON_SMTP_URL',
  'RECON_ORDERS_TOKEN',
  'RECON_METRICS_TOKEN',
  'DATABASE_URL',
  'EVENTSTORE_URL',
] as const;

export interface VariableDoc {
  readonly name: string;
  readonly default: string;
  readonly example: string;
  readonly meaning: string;
}

/** The documented variables: the README's configuration table is generated from this list. */
export const VARIABLES: readonly VariableDoc[] = [
  {
    name: 'DATABASE_URL',
    default: '(unset: embedded PostgreSQL under RECON_DATA_DIR)',
    example: 'postgres://recon:recon@localhost:5432/recon',
    meaning: 'PostgreSQL server for the event store (default backend) and all read models',
  },
  {
    name: 'EVENTSTORE_URL',
    default: '(unset: events in PostgreSQL)',
    example: 'esdb://localhost:2113?tls=false',
    meaning: 'selects the EventStoreDB/KurrentDB backend for events',
  },
  {
    name: 'RECON_DATA_DIR',
    default: './.recon',
    example: '/var/lib/recon',
    meaning: 'embedded PostgreSQL data and local state',
  },
  {
    name: 'RECON_TIMEZONE',
    default: 'UTC',
    example: 'Europe/Kyiv',
    meaning:
      'business time zone, an Area/Location name (not an abbreviation such as CET): days, months, schedules (a change rebuilds the read models)',
  },
  {
    name: 'RECON_CONFIG',
    default: '(unset)',
    example: './recon.projects.json',
    meaning: 'JSON file listing several PSP projects (e.g. test and live)',
  },
  {
    name: 'PSP_BASE_URL',
    default: '(none)',
    example: 'https://api.psp.example',
    meaning: 'PSP main API address ({base_url})',
  },
  {
    name: 'PSP_REPORT_URL',
    default: '(none)',
    example: 'https://report.psp.example',
    meaning: 'PSP register report address ({report_url})',
  },
  {
    name: 'PSP_POS_ID',
    default: '(none)',
    example: '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f',
    meaning: 'point-of-sale (project) identifier, 8-4-4-4-12 hex digits as the PSP issues it',
  },
  {
    name: 'PSP_AUTH_SCHEME',
    default: 'PAY',
    example: 'PAY',
    meaning: 'scheme token of the X-API-AUTH header (`<scheme> <key>:<secret>`); per project: `authScheme`',
  },
  { name: 'PSP_API_KEY', default: '(none)', example: 'pk_test_123', meaning: 'API key (secret, never echoed)' },
  {
    name: 'PSP_API_SECRET',
    default: '(none)',
    example: 'sk_test_456',
    meaning: 'API secret; also signs webhooks (secret)',
  },
  { name: 'PSP_ENDPOINTS_KEY', default: '(none)', example: 'ek_test_789', meaning: 'X-API-KEY endpoints key (secret)' },
  {
    name: 'PSP_PROJECT_NAME',
    default: 'default',
    example: 'live',
    meaning: 'label of the project given by the PSP_* variables',
  },
  {
    name: 'RECON_SUB_MERCHANTS',
    default: '(unset)',
    example: './sub-merchants',
    meaning: 'sub-merchant CSV file or directory of `*.csv`, in force for every command that judges (docs/ledger.md)',
  },
  {
    name: 'RECON_GRACE_HOURS',
    default: '48',
    example: '72',
    meaning: 'hours before a missing piece counts as a discrepancy (a change rebuilds the read models)',
  },
  {
    name: 'RECON_LOOKBACK_DAYS',
    default: '3',
    example: '7',
    meaning: 'incremental sync re-reads this many days before the watermark',
  },
  { name: 'RECON_LOG_LEVEL', default: 'info', example: 'debug', meaning: 'debug, info, warn, error or silent' },
  {
    name: 'RECON_REPORT_MAX_WAIT_MS',
    default: '600000',
    example: '120000',
    meaning: 'longest wait for a register report to become ready',
  },
  { name: 'RECON_PSP_TIMEOUT_MS', default: '30000', example: '10000', meaning: 'timeout of each PSP call' },
  {
    name: 'RECON_HEAL_CONCURRENCY',
    default: '8',
    example: '4',
    meaning: 'webhook re-send requests healing keeps in flight at once per PSP project',
  },
  {
    name: 'RECON_PROJECTION_THREADS',
    default: '1',
    example: '2',
    meaning: 'threads of one process `recon project --rebuild` and the demo spread the projections over',
  },
  {
    name: 'RECON_STOP_GRACE_MS',
    default: '15000 (start), 10000 (project)',
    example: '5000',
    meaning: 'after SIGTERM, how long a command may finish its work before its queries are cancelled',
  },
  {
    name: 'WEBHOOK_ALLOWED_IPS',
    default: '(unset: any sender)',
    example: '203.0.113.10,127.0.0.1',
    meaning: 'comma-separated sender allow-list',
  },
  {
    name: 'WEBHOOK_TRUST_PROXY',
    default: 'false',
    example: 'true',
    meaning: 'take the sender from X-Forwarded-For (behind a proxy)',
  },
  {
    name: 'WEBHOOK_TRUSTED_PROXIES',
    default: '(any peer, with WEBHOOK_TRUST_PROXY)',
    example: '10.0.0.5',
    meaning: 'comma-separated proxy addresses: X-Forwarded-For is taken only from them (implies WEBHOOK_TRUST_PROXY)',
  },
  { name: 'WEBHOOK_MAX_BODY_BYTES', default: '65536', example: '131072', meaning: 'largest webhook body accepted' },
  {
    name: 'RECON_AUDITOR_TOKEN',
    default: '(unset: auditor API off)',
    example: 'a-long-random-token',
    meaning: 'bearer token of the read-only auditor HTTP API (secret)',
  },
  {
    name: 'RECON_TOKEN',
    default: '(unset)',
    example: 'recon_Xq3…(printed once by recon users add)',
    meaning: 'your own user token, naming who acts in `recon users` and every decision (secret; docs/exceptions.md)',
  },
  {
    name: 'RECON_SMTP_URL',
    default: '(unset: statements are not e-mailed)',
    example: 'smtps://statements%40example.com:app-password@smtp.example.com:465',
    meaning: 'SMTP server statements are sent through (recon statements send); its password is a secret',
  },
  {
    name: 'RECON_MAIL_FROM',
    default: '(required with RECON_SMTP_URL)',
    example: 'Marketplace Payouts <payouts@example.com>',
    meaning: 'sender of the statement e-mails',
  },
  {
    name: 'RECON_ORDERS_TOKEN',
    default: '(unset: orders API off)',
    example: 'another-long-random-token',
    meaning: "bearer token of POST /api/orders, the marketplace's orders (secret; write access, unlike the auditor's)",
  },
  {
    name: 'RECON_FEE_CONTRACT',
    default: '(unset)',
    example: './fee-contract.csv',
    meaning: 'the fee contract CSV: sub_merchant_id,method,currency,percent,fixed,effective_from,rounding',
  },
  {
    name: 'RECON_CRON_NIGHTLY',
    default: '30 2 * * *',
    example: '0 3 * * *',
    meaning: 'schedule of the nightly reconciliation',
  },
  {
    name: 'RECON_CRON_MONTHLY',
    default: '0 6 1 * *',
    example: '0 7 2 * *',
    meaning: 'schedule of the monthly statements',
  },
  {
    name: 'RECON_CRON_HEALING',
    default: '15 * * * *',
    example: '*/30 * * * *',
    meaning: 'schedule of the hourly healing',
  },
  {
    name: 'RECON_CRON_ALERTS',
    default: '*/15 * * * *',
    example: '*/5 * * * *',
    meaning: 'schedule of the alerts evaluation (also run after every nightly run; docs/exceptions.md)',
  },
  {
    name: 'RECON_METRICS_TOKEN',
    default: '(unset: GET /metrics answers loopback only)',
    example: 'a-third-long-random-token',
    meaning: 'bearer token of GET /metrics, the Prometheus scrape (secret)',
  },
  {
    name: 'RECON_OUT_DIR',
    default: './out',
    example: '/srv/recon/out',
    meaning: 'where scheduled jobs write statements and reports',
  },
  ...STATEMENT_VARIABLES,
  ...DEBTOR_VARIABLES,
  ...HOLD_POLICY_VARIABLES,
];

export const DEFAULT_AUTH_SCHEME = 'PAY';

const exampleOf = (name: string): string => VARIABLES.find((v) => v.name === name)?.example ?? '';

/** The configuration in force, or every problem of it (each naming its variable), read in named steps. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ConfigResult {
  const r = envReader(env, exampleOf, SECRET_VARIABLES);
  const databaseUrl = r.url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const eventStoreUrl = r.url('EVENTSTORE_URL', ['esdb:', 'esdb+discover:', 'kurrentdb:', 'kurrent:']);
  const dataDir = path.resolve(r.get('RECON_DATA_DIR') ?? './.recon');
  const timezone = r.get('RECON_TIMEZONE') ?? 'UTC';
  const timezoneRefused = timezoneProblem(timezone);
  if (timezoneRefused) r.problem('RECON_TIMEZONE', timezoneRefused);
  const { projects, schemeOfEnv } = projectsOfEnv(r);
  const configFile = r.get('RECON_CONFIG');
  const bank = configFile === undefined ? EMPTY_BANK_CONFIG : readProjectFile(r, configFile, projects, schemeOfEnv);
  const exceptions = configFile === undefined ? {} : readExceptionsSection(r, configFile);
  const logLevel = (r.get('RECON_LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    r.problem(
      'RECON_LOG_LEVEL',
      `expected ${LOG_LEVELS.slice(0, -1).join(', ')} or ${LOG_LEVELS.at(-1)}, got ${JSON.stringify(logLevel)}`,
    );
  const webhookPeers = webhookPeersOf(r);
  const mail = mailOf(r);
  const statements = statementsConfigFrom(env);
  for (const i of statements.issues) r.problem(i.variable, i.problem);
  for (const i of holdPolicyFrom(env).issues) r.problem(i.variable, i.problem);
  const payoutsAccount = bank.accounts.some((a) => a.role === 'payouts');
  for (const i of debtorIssues(env, payoutsAccount)) r.problem(i.variable, i.problem);
  // checked here so that a bad value is refused at start; src/cli/shutdown.ts reads it when a stop begins
  r.int('RECON_STOP_GRACE_MS', 0, 0, 3_600_000);
  const { auditorToken, ordersToken } = tokensOf(r);
  const schedules = schedulesOf(r);
  const config: Config = {
    databaseUrl,
    eventStoreUrl,
    dataDir,
    timezone,
    projects,
    subMerchantsPath: r.get('RECON_SUB_MERCHANTS'),
    graceHours: r.int('RECON_GRACE_HOURS', 48, 0, 24 * 365),
    lookbackDays: r.int('RECON_LOOKBACK_DAYS', 3, 0, 365),
    logLevel,
    reportPollMaxWaitMs: r.int('RECON_REPORT_MAX_WAIT_MS', 600_000, 0, 86_400_000),
    pspTimeoutMs: r.int('RECON_PSP_TIMEOUT_MS', 30_000, 100, 600_000),
    healConcurrency: r.int('RECON_HEAL_CONCURRENCY', 8, 1, 64),
    statementWorkers: r.int('RECON_STATEMENT_WORKERS', defaultStatementWorkers(), 1, MAX_STATEMENT_WORKERS),
    projectionThreads: r.int('RECON_PROJECTION_THREADS', 1, 1, 16),
    webhook: { ...webhookPeers, maxBodyBytes: r.int('WEBHOOK_MAX_BODY_BYTES', 65_536, 1024, 16_777_216) },
    auditorToken,
    ordersToken,
    feeContractPath: r.get('RECON_FEE_CONTRACT'),
    schedules,
    outDir: path.resolve(r.get('RECON_OUT_DIR') ?? './out'),
    bank,
    mail,
    statements: statements.config,
    alerts: readAlertsConfig(r, configFile),
    metricsToken: metricsTokenOf(r),
    exceptions,
  };
  return r.issues.length > 0 ? { ok: false, issues: r.issues } : { ok: true, config };
}

/** The variables of the one PSP project the environment may give (PSP_*): all or none of them. */
const PSP_VARIABLES = [
  'PSP_BASE_URL',
  'PSP_REPORT_URL',
  'PSP_POS_ID',
  'PSP_API_KEY',
  'PSP_API_SECRET',
  'PSP_ENDPOINTS_KEY',
] as const;

/** The project the environment gives (if any), and the auth scheme every project defaults to. */
function projectsOfEnv(r: EnvReader): { projects: PspProject[]; schemeOfEnv: string } {
  const projects: PspProject[] = [];
  const schemeGiven = r.get('PSP_AUTH_SCHEME');
  if (schemeGiven !== undefined && !authScheme.safeParse(schemeGiven).success)
    r.problem('PSP_AUTH_SCHEME', `expected a scheme token such as PAY (no spaces), got ${JSON.stringify(schemeGiven)}`);
  const schemeOfEnv = schemeGiven ?? DEFAULT_AUTH_SCHEME;
  if (!PSP_VARIABLES.some((n) => r.get(n) !== undefined)) return { projects, schemeOfEnv };
  // One project from the environment: all or nothing, so that a half-configured PSP is caught at start.
  for (const n of PSP_VARIABLES)
    if (r.get(n) === undefined) r.problem(n, 'missing: the PSP_* variables are given together');
  const baseUrl = withoutCredentials(r, 'PSP_BASE_URL', r.url('PSP_BASE_URL', ['http:', 'https:']));
  const reportUrl = withoutCredentials(r, 'PSP_REPORT_URL', r.url('PSP_REPORT_URL', ['http:', 'https:']));
  const posId = r.get('PSP_POS_ID');
  if (posId !== undefined && !PSP_ID.test(posId))
    r.problem('PSP_POS_ID', `expected an id of 8-4-4-4-12 hex digits, got ${JSON.stringify(posId)}`);
  if (r.issues.length === 0 && baseUrl && reportUrl && posId)
    projects.push({
      name: r.get('PSP_PROJECT_NAME') ?? 'default',
      posId,
      baseUrl,
      reportUrl,
      apiKey: r.get('PSP_API_KEY')!,
      apiSecret: r.get('PSP_API_SECRET')!,
      endpointsKey: r.get('PSP_ENDPOINTS_KEY')!,
      authScheme: schemeOfEnv,
    });
  return { projects, schemeOfEnv };
}

/**
 * A PSP URL holding a user name or password is refused: fetch refuses every request to it ("Request cannot be
 * constructed from a URL that includes credentials"), so every PSP call failed as "PSP unreachable". Found in review 13.
 */
function withoutCredentials(r: EnvReader, name: string, url: string | undefined): string | undefined {
  if (url === undefined || !holdsCredentials(url)) return url;
  r.problem(name, 'the URL holds a user name or password, which recon cannot send (value not shown)');
  return undefined;
}

/** Who may send webhooks, and whose X-Forwarded-For is taken. */
function webhookPeersOf(r: EnvReader): Omit<Config['webhook'], 'maxBodyBytes'> {
  const ips = (name: string) => {
    const list = (r.get(name) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    // Kept as written (as `recon config` shows them); the receiver compares canonical forms (ip-address.ts).
    for (const ip of list)
      if (canonicalIp(ip) === undefined) r.problem(name, `not an IP address: ${JSON.stringify(ip)}`);
    return list;
  };
  const allowedIps = ips('WEBHOOK_ALLOWED_IPS');
  const trustProxyRaw = r.get('WEBHOOK_TRUST_PROXY') ?? 'false';
  if (!['true', 'false', '1', '0'].includes(trustProxyRaw))
    r.problem('WEBHOOK_TRUST_PROXY', `expected true or false, got ${JSON.stringify(trustProxyRaw)}`);
  const trustedProxies = ips('WEBHOOK_TRUSTED_PROXIES');
  return {
    allowedIps,
    trustProxy: trustProxyRaw === 'true' || trustProxyRaw === '1' || trustedProxies.length > 0,
    trustedProxies,
  };
}

/** Where statements are e-mailed from: both RECON_SMTP_URL and RECON_MAIL_FROM, or neither. */
function mailOf(r: EnvReader): Config['mail'] {
  const smtpUrl = r.get('RECON_SMTP_URL');
  const mailFrom = r.get('RECON_MAIL_FROM');
  if (smtpUrl !== undefined) {
    let protocol = '';
    try {
      protocol = new URL(smtpUrl).protocol;
    } catch {
      // reported below; the value holds a password and is not echoed
    }
    if (protocol !== 'smtp:' && protocol !== 'smtps:')
      r.problem('RECON_SMTP_URL', 'expected smtp://user:password@host:port or smtps://… (value not shown)');
    // nodemailer decodes the credentials (a bare "%" threw "URI malformed" at every mail): checked as DATABASE_URL's
    else r.url('RECON_SMTP_URL', ['smtp:', 'smtps:']);
    if (mailFrom === undefined) r.problem('RECON_MAIL_FROM', 'an e-mail address is required with RECON_SMTP_URL');
    else {
      const refused = mailFromProblem(mailFrom);
      if (refused) r.problem('RECON_MAIL_FROM', refused);
    }
  }
  return smtpUrl !== undefined && mailFrom !== undefined ? { smtpUrl, from: mailFrom } : undefined;
}

/** The bearer tokens of the auditor API and the orders API (two, so that the read-only one cannot write). */
function tokensOf(r: EnvReader): { auditorToken: string | undefined; ordersToken: string | undefined } {
  const auditorToken = r.get('RECON_AUDITOR_TOKEN');
  if (auditorToken !== undefined && auditorToken.length < 16)
    r.problem('RECON_AUDITOR_TOKEN', 'expected at least 16 characters');
  const ordersToken = r.get('RECON_ORDERS_TOKEN');
  if (ordersToken !== undefined && ordersToken.length < 16)
    r.problem('RECON_ORDERS_TOKEN', 'expected at least 16 characters');
  if (ordersToken !== undefined && ordersToken === auditorToken)
    r.problem('RECON_ORDERS_TOKEN', 'must differ from RECON_AUDITOR_TOKEN (the auditor token is read-only)');
  return { auditorToken, ordersToken };
}

/** The bearer token of GET /metrics, when set: long enough, and not a token of another door. */
function metricsTokenOf(r: EnvReader): string | undefined {
  const t = r.get('RECON_METRICS_TOKEN');
  if (t !== undefined && t.length < 16) r.problem('RECON_METRICS_TOKEN', 'expected at least 16 characters');
  if (t !== undefined && (t === r.get('RECON_ORDERS_TOKEN') || t === r.get('RECON_AUDITOR_TOKEN')))
    r.problem('RECON_METRICS_TOKEN', 'must differ from RECON_AUDITOR_TOKEN and RECON_ORDERS_TOKEN');
  return t;
}

/** The jobs' schedules: node-cron's own validation; the scheduler (src/scheduler/cron.ts) also refuses W and #. */
function schedulesOf(r: EnvReader): Config['schedules'] {
  const schedule = (name: string, fallback: string): string => {
    const v = r.get(name) ?? fallback;
    const d = cron.validateDetailed(v);
    const unsupported =
      d.fields && [...d.fields.dayOfMonth, ...d.fields.dayOfWeek].some((x) => typeof x === 'string' && x !== 'L');
    if (!d.valid || unsupported)
      r.problem(
        name,
        `expected a cron expression (minute hour day month weekday), got ${JSON.stringify(v)}${d.errors[0] ? `: ${d.errors[0].message}` : unsupported ? ': W and # are not supported' : ''}`,
      );
    return v;
  };
  return {
    nightly: schedule('RECON_CRON_NIGHTLY', '30 2 * * *'),
    monthly: schedule('RECON_CRON_MONTHLY', '0 6 1 * *'),
    healing: schedule('RECON_CRON_HEALING', '15 * * * *'),
    alerts: schedule('RECON_CRON_ALERTS', '*/15 * * * *'),
  };
}

export function formatConfigIssues(issues: readonly ConfigIssue[]): string {
  const lines = issues.map(
    (i) => `  - ${i.variable}: ${i.problem}${i.example ? ` (example: ${i.variable}=${i.example})` : ''}`,
  );
  return `recon cannot start: ${issues.length} configuration problem${issues.length === 1 ? '' : 's'}\n${lines.join('\n')}`;
}

/** The secret values in force, for the logger to scrub from anything it writes. */
export function secretValues(config: Config): string[] {
  const values = config.projects.flatMap((p) => [p.apiKey, p.apiSecret, p.endpointsKey]);
  if (config.auditorToken) values.push(config.auditorToken);
  if (config.ordersToken) values.push(config.ordersToken);
  if (config.metricsToken) values.push(config.metricsToken);
  values.push(...alertSecrets(config.alerts));
  // the passwords of the connection strings, as written and decoded (a client library may print either)
  for (const u of [config.databaseUrl, config.eventStoreUrl, config.mail?.smtpUrl]) values.push(...urlPasswords(u));
  return values.filter((v) => v.length >= 4);
}

export class ConfigError extends ReconError {
  readonly code = 'CONFIG_INVALID';
  readonly kind = 'configuration';
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(formatConfigIssues(issues));
    this.name = 'ConfigError';
  }
}

export function requireConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const r = loadConfig(env);
  if (!r.ok) throw new ConfigError(r.issues);
  return r.config;
}

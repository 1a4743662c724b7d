import { ReconError } from '../errors';
import { STATEMENT_VARIABLES, type StatementsConfig, statementsConfigFrom } from './statements';
import { HOLD_POLICY_VARIABLES, holdPolicyFrom } from './hold-policy';
import { type BankConfig, bankConfigFrom, bankConfigIssues, bankConfigSchema, EMPTY_BANK_CONFIG } from './bank';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { IANAZone } from 'luxon';
import cron from 'node-cron';
import { z } from 'zod';
import { canonicalIp } from './ip-address';
import { urlPasswords } from '../url-passwords';

/**
 * Configuration from the environment (and an optional JSON file listing several PSP projects),
 * validated once at start-up. Every problem is collected so that one message names them all.
 */

export interface PspProject {
  /** Label used in logs and file names ("test", "live"). */
  readonly name: string;
  readonly posId: string;
  readonly baseUrl: string;
  readonly reportUrl: string;
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly endpointsKey: string;
  /** scheme token of the X-API-AUTH header (`<scheme> <key>:<secret>`); PAY when not given */
  readonly authScheme?: string;
}

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
  readonly schedules: { readonly nightly: string; readonly monthly: string; readonly healing: string };
  readonly outDir: string;
  /** bank accounts and the rules for matching money that moved (the `bank` object of RECON_CONFIG) */
  readonly bank: BankConfig;
  /** where statements are e-mailed from (unset: `recon statements send` is off) */
  readonly mail: { readonly smtpUrl: string; readonly from: string } | undefined;
  /** the issuer, contact and language of statements (src/config/statements.ts) */
  readonly statements?: StatementsConfig;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface ConfigIssue {
  readonly variable: string;
  readonly problem: string;
  readonly example: string;
}

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
    meaning: 'business time zone: days, months, schedules (a change rebuilds the read models)',
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
    name: 'RECON_OUT_DIR',
    default: './out',
    example: '/srv/recon/out',
    meaning: 'where scheduled jobs write statements and reports',
  },
  ...STATEMENT_VARIABLES,
  ...HOLD_POLICY_VARIABLES,
];

/**
 * The ids the PSP issues (pos_id, project ids): 8-4-4-4-12 hex digits. Not z.uuid(): that also demands an
 * RFC 9562 version and variant, and the PSP's own documentation shows ids whose variant digit is not one.
 */
const PSP_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const pspId = z.string().regex(PSP_ID, 'expected an id of 8-4-4-4-12 hex digits');

/** An HTTP authentication scheme token (RFC 9110 token characters, no spaces). */
const authScheme = z
  .string()
  .regex(
    /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,40}$/,
    'expected a scheme token such as PAY (letters, digits, - . _; no spaces)',
  );
export const DEFAULT_AUTH_SCHEME = 'PAY';

const exampleOf = (name: string): string => VARIABLES.find((v) => v.name === name)?.example ?? '';

const projectFileSchema = z.object({
  projects: z
    .array(
      z.object({
        name: z.string().min(1),
        posId: pspId,
        baseUrl: z.url(),
        reportUrl: z.url(),
        apiKey: z.string().min(1),
        apiSecret: z.string().min(1),
        endpointsKey: z.string().min(1),
        authScheme: authScheme.optional(),
      }),
    )
    .min(1)
    .optional(),
  bank: bankConfigSchema.optional(),
});

/** In the project file, a secret may be written as "env:NAME" to read it from the environment. */
function resolveEnvRef(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string' && value.startsWith('env:')) return env[value.slice(4)];
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ConfigResult {
  const issues: ConfigIssue[] = [];
  const problem = (variable: string, text: string) =>
    issues.push({ variable, problem: text, example: exampleOf(variable) });
  const get = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const v = get(name);
    if (v === undefined) return fallback;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      problem(name, `expected a whole number from ${min} to ${max}, got ${JSON.stringify(v)}`);
      return fallback;
    }
    return Number(v);
  };
  const url = (name: string, protocols: string[]): string | undefined => {
    const v = get(name);
    if (v === undefined) return undefined;
    try {
      const u = new URL(v);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
      // What the drivers do with the credentials, checked here so that the message names the variable:
      // they percent-decode them, and split the address at the first "@".
      const userinfo = /^[a-z+]+:\/\/([^/?#]*)@/i.exec(v)?.[1] ?? '';
      if (userinfo.includes('@')) {
        problem(name, 'the user name or password holds "@": write it percent-encoded (%40)');
        return undefined;
      }
      try {
        decodeURIComponent(u.username);
        decodeURIComponent(u.password);
      } catch {
        problem(name, 'the user name or password holds a "%" that is not a percent-encoding: write it as %25');
        return undefined;
      }
      return v;
    } catch {
      const secret = (SECRET_VARIABLES as readonly string[]).includes(name);
      problem(
        name,
        `expected a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}${secret ? '' : `, got ${JSON.stringify(v)}`}`,
      );
      return undefined;
    }
  };

  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const eventStoreUrl = url('EVENTSTORE_URL', ['esdb:', 'esdb+discover:', 'kurrentdb:', 'kurrent:']);
  const dataDir = path.resolve(get('RECON_DATA_DIR') ?? './.recon');
  const timezone = get('RECON_TIMEZONE') ?? 'UTC';
  if (!IANAZone.isValidZone(timezone))
    problem('RECON_TIMEZONE', `expected an IANA time zone name, got ${JSON.stringify(timezone)}`);

  const projects: PspProject[] = [];
  const schemeGiven = get('PSP_AUTH_SCHEME');
  if (schemeGiven !== undefined && !authScheme.safeParse(schemeGiven).success)
    problem('PSP_AUTH_SCHEME', `expected a scheme token such as PAY (no spaces), got ${JSON.stringify(schemeGiven)}`);
  const schemeOfEnv = schemeGiven ?? DEFAULT_AUTH_SCHEME;
  const pspVars = [
    'PSP_BASE_URL',
    'PSP_REPORT_URL',
    'PSP_POS_ID',
    'PSP_API_KEY',
    'PSP_API_SECRET',
    'PSP_ENDPOINTS_KEY',
  ];
  const givenPsp = pspVars.filter((n) => get(n) !== undefined);
  if (givenPsp.length > 0) {
    // One project from the environment: all or nothing, so that a half-configured PSP is caught at start.
    for (const n of pspVars) if (get(n) === undefined) problem(n, 'missing: the PSP_* variables are given together');
    const baseUrl = url('PSP_BASE_URL', ['http:', 'https:']);
    const reportUrl = url('PSP_REPORT_URL', ['http:', 'https:']);
    const posId = get('PSP_POS_ID');
    if (posId !== undefined && !PSP_ID.test(posId))
      problem('PSP_POS_ID', `expected an id of 8-4-4-4-12 hex digits, got ${JSON.stringify(posId)}`);
    if (issues.length === 0 && baseUrl && reportUrl && posId) {
      projects.push({
        name: get('PSP_PROJECT_NAME') ?? 'default',
        posId,
        baseUrl,
        reportUrl,
        apiKey: get('PSP_API_KEY')!,
        apiSecret: get('PSP_API_SECRET')!,
        endpointsKey: get('PSP_ENDPOINTS_KEY')!,
        authScheme: schemeOfEnv,
      });
    }
  }
  const configFile = get('RECON_CONFIG');
  let bank: BankConfig = EMPTY_BANK_CONFIG;
  if (configFile !== undefined) {
    let raw: { projects?: unknown[] } | undefined;
    try {
      const text = readFileSync(configFile, 'utf8');
      try {
        raw = JSON.parse(text) as { projects?: unknown[] };
      } catch (e) {
        // V8 quotes a piece of the text in its message, and the file holds secrets: keep only the position.
        const at = /position (\d+)/.exec((e as Error).message)?.[1];
        problem('RECON_CONFIG', `${configFile} is not valid JSON${at ? ` (at character ${at})` : ''}`);
      }
    } catch (e) {
      problem('RECON_CONFIG', `cannot read ${configFile}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    if (raw !== undefined && (typeof raw !== 'object' || raw === null)) {
      problem('RECON_CONFIG', `${configFile}: expected a JSON object with a "projects" array`);
    } else if (raw !== undefined) {
      const unsetRefs = new Set<string>();
      const resolved = {
        ...raw,
        projects: Array.isArray(raw.projects)
          ? raw.projects.map((p, n) =>
              p !== null && typeof p === 'object'
                ? Object.fromEntries(
                    Object.entries(p as object).map(([k, v]) => {
                      const value = resolveEnvRef(v, env);
                      if (value === undefined) {
                        unsetRefs.add(`projects.${n}.${k}`);
                        problem(
                          'RECON_CONFIG',
                          `${configFile}: projects.${n}.${k} refers to ${String(v).slice(4)}, which is not set in the environment`,
                        );
                      }
                      return [k, value];
                    }),
                  )
                : p,
            )
          : raw.projects,
      };
      const parsed = projectFileSchema.safeParse(resolved);
      if (!parsed.success) {
        for (const i of parsed.error.issues) {
          if (unsetRefs.has(i.path.join('.'))) continue;
          // Name the field, never the value: the file holds secrets.
          problem('RECON_CONFIG', `${configFile}: ${i.path.join('.') || '(root)'}: ${i.message}`);
        }
      } else {
        if (parsed.data.projects === undefined && parsed.data.bank === undefined)
          problem('RECON_CONFIG', `${configFile}: expected a "projects" array or a "bank" object`);
        if (parsed.data.bank !== undefined) {
          bank = bankConfigFrom(parsed.data.bank);
          for (const m of bankConfigIssues(bank)) problem('RECON_CONFIG', `${configFile}: ${m}`);
        }
        for (const p of parsed.data.projects ?? []) {
          if (projects.some((q) => q.posId === p.posId || q.name === p.name)) {
            problem('RECON_CONFIG', `${configFile}: project ${p.name} repeats a name or posId already configured`);
          } else projects.push({ ...p, authScheme: p.authScheme ?? schemeOfEnv });
        }
      }
    }
  }

  const logLevel = (get('RECON_LOG_LEVEL') ?? 'info') as LogLevel;
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel)) {
    problem('RECON_LOG_LEVEL', `expected debug, info, warn, error or silent, got ${JSON.stringify(logLevel)}`);
  }
  const allowedIps = (get('WEBHOOK_ALLOWED_IPS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // Kept as written (as `recon config` shows them); the receiver compares canonical forms (ip-address.ts).
  for (const ip of allowedIps)
    if (canonicalIp(ip) === undefined) problem('WEBHOOK_ALLOWED_IPS', `not an IP address: ${JSON.stringify(ip)}`);
  const trustProxyRaw = get('WEBHOOK_TRUST_PROXY') ?? 'false';
  if (!['true', 'false', '1', '0'].includes(trustProxyRaw))
    problem('WEBHOOK_TRUST_PROXY', `expected true or false, got ${JSON.stringify(trustProxyRaw)}`);
  const trustedProxies = (get('WEBHOOK_TRUSTED_PROXIES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const ip of trustedProxies)
    if (canonicalIp(ip) === undefined) problem('WEBHOOK_TRUSTED_PROXIES', `not an IP address: ${JSON.stringify(ip)}`);
  const smtpUrl = get('RECON_SMTP_URL');
  const mailFrom = get('RECON_MAIL_FROM');
  if (smtpUrl !== undefined) {
    let protocol = '';
    try {
      protocol = new URL(smtpUrl).protocol;
    } catch {
      // reported below; the value holds a password and is not echoed
    }
    if (protocol !== 'smtp:' && protocol !== 'smtps:')
      problem('RECON_SMTP_URL', 'expected smtp://user:password@host:port or smtps://… (value not shown)');
    if (mailFrom === undefined || !mailFrom.includes('@'))
      problem('RECON_MAIL_FROM', 'an e-mail address is required with RECON_SMTP_URL');
  }
  const statements = statementsConfigFrom(env);
  for (const i of statements.issues) problem(i.variable, i.problem);
  for (const i of holdPolicyFrom(env).issues) problem(i.variable, i.problem);
  const auditorToken = get('RECON_AUDITOR_TOKEN');
  if (auditorToken !== undefined && auditorToken.length < 16)
    problem('RECON_AUDITOR_TOKEN', 'expected at least 16 characters');
  const ordersToken = get('RECON_ORDERS_TOKEN');
  if (ordersToken !== undefined && ordersToken.length < 16)
    problem('RECON_ORDERS_TOKEN', 'expected at least 16 characters');
  if (ordersToken !== undefined && ordersToken === auditorToken)
    problem('RECON_ORDERS_TOKEN', 'must differ from RECON_AUDITOR_TOKEN (the auditor token is read-only)');
  // Schedules: node-cron's own validation; the scheduler (src/scheduler/cron.ts) also refuses W and # tokens.
  const schedule = (name: string, fallback: string): string => {
    const v = get(name) ?? fallback;
    const d = cron.validateDetailed(v);
    const unsupported =
      d.fields && [...d.fields.dayOfMonth, ...d.fields.dayOfWeek].some((x) => typeof x === 'string' && x !== 'L');
    if (!d.valid || unsupported)
      problem(
        name,
        `expected a cron expression (minute hour day month weekday), got ${JSON.stringify(v)}${d.errors[0] ? `: ${d.errors[0].message}` : unsupported ? ': W and # are not supported' : ''}`,
      );
    return v;
  };
  const schedules = {
    nightly: schedule('RECON_CRON_NIGHTLY', '30 2 * * *'),
    monthly: schedule('RECON_CRON_MONTHLY', '0 6 1 * *'),
    healing: schedule('RECON_CRON_HEALING', '15 * * * *'),
  };

  const config: Config = {
    databaseUrl,
    eventStoreUrl,
    dataDir,
    timezone,
    projects,
    subMerchantsPath: get('RECON_SUB_MERCHANTS'),
    graceHours: int('RECON_GRACE_HOURS', 48, 0, 24 * 365),
    lookbackDays: int('RECON_LOOKBACK_DAYS', 3, 0, 365),
    logLevel,
    reportPollMaxWaitMs: int('RECON_REPORT_MAX_WAIT_MS', 600_000, 0, 86_400_000),
    pspTimeoutMs: int('RECON_PSP_TIMEOUT_MS', 30_000, 100, 600_000),
    webhook: {
      allowedIps,
      trustProxy: trustProxyRaw === 'true' || trustProxyRaw === '1' || trustedProxies.length > 0,
      trustedProxies,
      maxBodyBytes: int('WEBHOOK_MAX_BODY_BYTES', 65_536, 1024, 16_777_216),
    },
    auditorToken,
    ordersToken,
    feeContractPath: get('RECON_FEE_CONTRACT'),
    schedules,
    outDir: path.resolve(get('RECON_OUT_DIR') ?? './out'),
    bank,
    mail: smtpUrl !== undefined && mailFrom !== undefined ? { smtpUrl, from: mailFrom } : undefined,
    statements: statements.config,
  };
  return issues.length > 0 ? { ok: false, issues } : { ok: true, config };
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

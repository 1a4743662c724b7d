import { jsonFileText } from './json-file';
import { z } from 'zod';
import { DISCREPANCY_TYPES, SEVERITIES, type Severity } from '../reconciliation/discrepancies/registry';
import type { EnvReader } from './reader';
import { configObject, issueLines } from './strict';

/**
 * The `alerts` object of RECON_CONFIG (docs/exceptions.md, "Alerts"): named channels, rules that send to them,
 * flood control and retries. A secret (a webhook's signing secret, a Slack URL, which holds its token) may be
 * written "env:NAME"; the webhook's secret must be. Problems name the field, never the value.
 */

export type AlertChannel =
  | { readonly type: 'webhook'; readonly url: string; readonly secret: string }
  | { readonly type: 'slack'; readonly url: string }
  | { readonly type: 'email'; readonly to: readonly string[] };

export interface DiscrepancyMatch {
  readonly types?: readonly string[];
  /** amount in doubt (minor units, absolute) at least this */
  readonly minAmount?: bigint;
  readonly minAgeHours?: number;
  readonly currency?: string;
  readonly subMerchant?: string;
  /** this severity or a higher one */
  readonly severity?: Severity;
}

export type AlertRule =
  | {
      readonly name: string;
      readonly on: 'discrepancy';
      readonly match: DiscrepancyMatch;
      /** alert once more when a matching exception passes its due date */
      readonly escalate: boolean;
      readonly channels: readonly string[];
    }
  | { readonly name: string; readonly on: 'job_failed'; readonly channels: readonly string[] }
  | {
      readonly name: string;
      readonly on: 'sync_overdue';
      /** a project's sync must have completed within this many hours */
      readonly withinHours: number;
      readonly channels: readonly string[];
    }
  | {
      readonly name: string;
      readonly on: 'digest';
      /** local hour (RECON_TIMEZONE) from which the day's digest is sent */
      readonly atHour: number;
      readonly channels: readonly string[];
    };

export interface AlertsConfig {
  readonly channels: Readonly<Record<string, AlertChannel>>;
  readonly rules: readonly AlertRule[];
  /** more new alerts than this in one evaluation: one summary alert instead */
  readonly maxPerRun: number;
  readonly retry: { readonly maxAttempts: number; readonly baseSeconds: number; readonly maxSeconds: number };
  /** failed job runs older than this are not alerted on (a first evaluation does not dig up the past) */
  readonly jobLookbackHours: number;
}

export const EMPTY_ALERTS_CONFIG: AlertsConfig = {
  channels: {},
  rules: [],
  maxPerRun: 20,
  retry: { maxAttempts: 6, baseSeconds: 60, maxSeconds: 3600 },
  jobLookbackHours: 168,
};

const name = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'expected a name of a-z 0-9 . _ - (at most 63)');
// credentials in a URL would be printed by fetch in every error it throws, and so recorded in a delivery's error
const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).refine((u) => {
  // runs after a failed URL check too: a text that is no URL is that check's problem, not this one's
  const parsed = URL.canParse(u) ? new URL(u) : undefined;
  return parsed === undefined || (parsed.username === '' && parsed.password === '');
}, 'a URL must not carry a user name or password');
const channelSchema = z.discriminatedUnion('type', [
  configObject({ type: z.literal('webhook'), url: httpUrl, secret: z.string().min(16, 'at least 16 characters') }),
  configObject({ type: z.literal('slack'), url: httpUrl }),
  configObject({ type: z.literal('email'), to: z.array(z.email()).min(1) }),
]);
const channels = z.array(name).min(1);
const matchSchema = configObject({
  types: z
    .array(z.enum(DISCREPANCY_TYPES as [string, ...string[]]))
    .min(1)
    .optional(),
  minAmount: z
    .string()
    .regex(/^\d{1,18}$/, 'expected minor units as a string of digits')
    .transform(BigInt)
    .optional(),
  minAgeHours: z.number().int().min(0).max(87_600).optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'expected an ISO 4217 code')
    .optional(),
  subMerchant: z.string().min(1).optional(),
  severity: z.enum(SEVERITIES).optional(),
});
const ruleSchema = z.discriminatedUnion('on', [
  configObject({
    name,
    on: z.literal('discrepancy'),
    match: matchSchema.default({}),
    escalate: z.boolean().default(true),
    channels,
  }),
  configObject({ name, on: z.literal('job_failed'), channels }),
  configObject({ name, on: z.literal('sync_overdue'), withinHours: z.number().int().min(1).max(8760), channels }),
  configObject({ name, on: z.literal('digest'), atHour: z.number().int().min(0).max(23).default(8), channels }),
]);
export const alertsConfigSchema = configObject({
  channels: z.record(name, channelSchema).default({}),
  rules: z.array(ruleSchema).default([]),
  maxPerRun: z.number().int().min(1).max(10_000).default(EMPTY_ALERTS_CONFIG.maxPerRun),
  // never less than a channel's timeout (10 s): an attempt still in flight must not look due to another worker
  retry: configObject({
    maxAttempts: z.number().int().min(1).max(50).default(6),
    baseSeconds: z.number().int().min(10).max(86_400).default(60),
    maxSeconds: z.number().int().min(10).max(604_800).default(3600),
  }).default(EMPTY_ALERTS_CONFIG.retry),
  jobLookbackHours: z.number().int().min(1).max(8760).default(168),
});

/** The problems of a parsed config that the schema cannot see: names repeated or unknown, a retry range inverted. */
function crossIssues(c: AlertsConfig): string[] {
  const out: string[] = [];
  // backoff is min(base × 2^(n−1), max): a base above the max would be cut to it at the first wait, unsaid
  if (c.retry.baseSeconds > c.retry.maxSeconds)
    out.push('alerts.retry.baseSeconds: more than alerts.retry.maxSeconds (expected baseSeconds ≤ maxSeconds)');
  const seen = new Set<string>();
  c.rules.forEach((r, n) => {
    if (seen.has(r.name)) out.push(`alerts.rules.${n}.name: ${r.name} is the name of an earlier rule`);
    seen.add(r.name);
    r.channels.forEach((ch, k) => {
      if (!(ch in c.channels)) out.push(`alerts.rules.${n}.channels.${k}: no channel named ${ch} in alerts.channels`);
    });
  });
  return out;
}

/** "env:NAME" read from the environment; undefined when that variable is unset. */
function resolved(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string' && value.startsWith('env:')) {
    const v = env[value.slice(4)];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }
  return value;
}

/** The channels with their "env:NAME" values read; each unset one and each literal webhook secret is a problem. */
function withSecrets(raw: unknown, env: NodeJS.ProcessEnv, problems: string[]): unknown {
  if (raw === null || typeof raw !== 'object' || !('channels' in raw)) return raw;
  const chans = (raw as { channels: unknown }).channels;
  if (chans === null || typeof chans !== 'object') return raw;
  const out: Record<string, unknown> = {};
  for (const [n, ch] of Object.entries(chans)) {
    if (ch === null || typeof ch !== 'object') {
      out[n] = ch;
      continue;
    }
    const c = { ...(ch as Record<string, unknown>) };
    for (const k of ['url', 'secret'] as const) {
      if (!(k in c)) continue;
      if (k === 'secret' && !(typeof c[k] === 'string' && (c[k] as string).startsWith('env:')))
        problems.push(`alerts.channels.${n}.secret: write it as "env:NAME" and set NAME in the environment`);
      const v = resolved(c[k], env);
      if (v === undefined)
        problems.push(`alerts.channels.${n}.${k} refers to ${String(c[k]).slice(4)}, which is not set`);
      c[k] = v ?? '';
    }
    out[n] = c;
  }
  return { ...(raw as object), channels: out };
}

/** The `alerts` of a project file's JSON, or the problems of it, each naming its field (never a value). */
export function alertsConfigFrom(raw: unknown, env: NodeJS.ProcessEnv): { config: AlertsConfig; problems: string[] } {
  if (raw === undefined) return { config: EMPTY_ALERTS_CONFIG, problems: [] };
  const problems: string[] = [];
  const parsed = alertsConfigSchema.safeParse(withSecrets(raw, env, problems));
  if (!parsed.success) {
    problems.push(...issueLines('alerts', parsed.error.issues));
    return { config: EMPTY_ALERTS_CONFIG, problems: [...new Set(problems)] };
  }
  const config = parsed.data as AlertsConfig;
  problems.push(...crossIssues(config));
  return { config: problems.length ? EMPTY_ALERTS_CONFIG : config, problems };
}

/**
 * The alerts of RECON_CONFIG, read by loadConfig (src/config/env.ts). A file that cannot be read or parsed is
 * reported by the project file's reader; here it is no alerts.
 */
export function readAlertsConfig(r: EnvReader, configFile: string | undefined): AlertsConfig {
  if (configFile === undefined) return EMPTY_ALERTS_CONFIG;
  let raw: unknown;
  try {
    raw = JSON.parse(jsonFileText(configFile));
  } catch {
    return EMPTY_ALERTS_CONFIG;
  }
  if (raw === null || typeof raw !== 'object') return EMPTY_ALERTS_CONFIG;
  const { config, problems } = alertsConfigFrom((raw as { alerts?: unknown }).alerts, r.env);
  for (const p of problems) r.problem('RECON_CONFIG', `${configFile}: ${p}`);
  return config;
}

/** The secrets of the alerts (signing secrets, webhook URLs: a Slack URL is its own token), for the log scrubber. */
export function alertSecrets(c: AlertsConfig | undefined): string[] {
  if (!c) return [];
  return Object.values(c.channels).flatMap((ch) =>
    ch.type === 'webhook' ? [ch.secret, ch.url] : ch.type === 'slack' ? [ch.url] : [],
  );
}

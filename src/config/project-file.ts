import { jsonFileText } from './json-file';
import { parse as losslessParse } from 'lossless-json';
import { z } from 'zod';
import { type BankConfig, bankConfigFrom, bankConfigIssues, bankConfigSchema, EMPTY_BANK_CONFIG } from './bank';
import { type ExceptionsConfig, exceptionsConfigFrom } from './exceptions';
import type { EnvReader } from './reader';
import { configObject, issueLines } from './strict';

/**
 * RECON_CONFIG, the project file: several PSP projects and the bank. Its secrets may be written "env:NAME";
 * its problems name the field, never the value (the file holds secrets).
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

/**
 * The ids the PSP issues (pos_id, project ids): 8-4-4-4-12 hex digits. Not z.uuid(): that also demands an
 * RFC 9562 version and variant, and the PSP's own documentation shows ids whose variant digit is not one.
 */
export const PSP_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const pspId = z.string().regex(PSP_ID, 'expected an id of 8-4-4-4-12 hex digits');

/** An HTTP authentication scheme token (RFC 9110 token characters, no spaces). */
export const authScheme = z
  .string()
  .regex(
    /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,40}$/,
    'expected a scheme token such as PAY (letters, digits, - . _; no spaces)',
  );

/** A URL with a user name or password, which fetch refuses (every PSP call to it would fail as unreachable). */
export function holdsCredentials(url: string): boolean {
  const u = URL.parse(url);
  return u !== null && (u.username !== '' || u.password !== '');
}

/** refused here, naming the field */
const pspUrl = z
  .url()
  .refine((v) => !holdsCredentials(v), 'the URL holds a user name or password, which recon cannot send');

const projectFileSchema = configObject({
  projects: z
    .array(
      configObject({
        name: z.string().min(1),
        posId: pspId,
        baseUrl: pspUrl,
        reportUrl: pspUrl,
        apiKey: z.string().min(1),
        apiSecret: z.string().min(1),
        endpointsKey: z.string().min(1),
        authScheme: authScheme.optional(),
      }),
    )
    .min(1)
    .optional(),
  bank: bankConfigSchema.optional(),
  // read and checked by src/config/alerts.ts
  alerts: z.unknown().optional(),
  /** read on its own by readExceptionsSection (src/config/exceptions.ts) */
  exceptions: z.unknown().optional(),
});

/** The file's projects added to `projects` (each name and posId once), and its bank (empty when none). */
export function readProjectFile(
  r: EnvReader,
  configFile: string,
  projects: PspProject[],
  schemeOfEnv: string,
): BankConfig {
  const raw = jsonOf(r, configFile);
  if (raw === undefined) return EMPTY_BANK_CONFIG;
  if (typeof raw !== 'object' || raw === null) {
    r.problem('RECON_CONFIG', `${configFile}: expected a JSON object with a "projects" array`);
    return EMPTY_BANK_CONFIG;
  }
  const unsetRefs = new Set<string>();
  const parsed = projectFileSchema.safeParse(withEnvRefs(r, configFile, raw as { projects?: unknown[] }, unsetRefs));
  if (!parsed.success) {
    const issues = parsed.error.issues.filter((i) => !unsetRefs.has(i.path.join('.')));
    // Name the field, never the value: the file holds secrets.
    for (const line of issueLines('', issues)) r.problem('RECON_CONFIG', `${configFile}: ${line}`);
    return EMPTY_BANK_CONFIG;
  }
  const d = parsed.data;
  if (d.projects === undefined && d.bank === undefined && d.alerts === undefined && d.exceptions === undefined)
    r.problem(
      'RECON_CONFIG',
      `${configFile}: expected a "projects" array, a "bank" object, an "alerts" object or an "exceptions" object`,
    );
  let bank = EMPTY_BANK_CONFIG;
  if (parsed.data.bank !== undefined) {
    bank = bankConfigFrom(parsed.data.bank);
    for (const m of bankConfigIssues(bank)) r.problem('RECON_CONFIG', `${configFile}: ${m}`);
  }
  for (const p of parsed.data.projects ?? []) {
    if (projects.some((q) => q.posId === p.posId || q.name === p.name)) {
      r.problem('RECON_CONFIG', `${configFile}: project ${p.name} repeats a name or posId already configured`);
    } else projects.push({ ...p, authScheme: p.authScheme ?? schemeOfEnv });
  }
  return bank;
}

/** The file's `exceptions` section (thresholds, SLA, write-offs); its problems named by field. */
export function readExceptionsSection(r: EnvReader, configFile: string): ExceptionsConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(jsonFileText(configFile));
  } catch {
    return {}; // unreadable or not JSON: readProjectFile has said so already
  }
  const section = raw !== null && typeof raw === 'object' ? (raw as { exceptions?: unknown }).exceptions : undefined;
  const { config, issues } = exceptionsConfigFrom(section);
  for (const i of issues) r.problem('RECON_CONFIG', `${configFile}: ${i}`);
  return config;
}

function jsonOf(r: EnvReader, configFile: string): unknown {
  let text: string;
  try {
    text = jsonFileText(configFile);
  } catch (e) {
    r.problem('RECON_CONFIG', `cannot read ${configFile}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    // V8 quotes a piece of the text in its message, and the file holds secrets: keep only the position.
    const at = /position (\d+)/.exec((e as Error).message)?.[1];
    r.problem('RECON_CONFIG', `${configFile} is not valid JSON${at ? ` (at character ${at})` : ''}`);
    return undefined;
  }
  const twice = keyGivenTwice(text);
  if (twice) {
    r.problem('RECON_CONFIG', `${configFile}: ${twice}`);
    return undefined;
  }
  return value;
}

/**
 * A key given twice with different values in one object (`"currency": "EUR", …, "currency": "UAH"`), which
 * JSON.parse settles silently by the last: which was meant is unknowable. Named by key and place, never value.
 */
export function keyGivenTwice(text: string): string | null {
  try {
    losslessParse(text);
    return null;
  } catch (e) {
    const m = /^Duplicate key '(.{0,80})' encountered at position (\d+)/.exec((e as Error).message);
    return m ? `the key ${JSON.stringify(m[1])} is given twice with different values (at character ${m[2]})` : null;
  }
}

/** The projects with each "env:NAME" value read from the environment; an unset one is a problem (and noted). */
function withEnvRefs(r: EnvReader, configFile: string, raw: { projects?: unknown[] }, unsetRefs: Set<string>): unknown {
  if (!Array.isArray(raw.projects)) return raw;
  return {
    ...raw,
    projects: raw.projects.map((p, n) =>
      p !== null && typeof p === 'object'
        ? Object.fromEntries(
            Object.entries(p as object).map(([k, v]) => {
              const value = resolveEnvRef(v, r.env);
              if (value === undefined) {
                unsetRefs.add(`projects.${n}.${k}`);
                r.problem(
                  'RECON_CONFIG',
                  `${configFile}: projects.${n}.${k} refers to ${String(v).slice(4)}, which is not set in the environment`,
                );
              }
              return [k, value];
            }),
          )
        : p,
    ),
  };
}

/** In the project file, a secret may be written as "env:NAME" to read it from the environment. */
function resolveEnvRef(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string' && value.startsWith('env:')) return env[value.slice(4)];
  return value;
}

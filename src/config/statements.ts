import { z } from 'zod';

/**
 * What a statement says of the marketplace that issues it (legal name, address, tax id), whom to ask and how
 * to dispute a figure, and the language of a sub-merchant whose directory row names none. Set by RECON_*
 * variables so that a deployment changes them without a file; a statement shows "—" for what is unset.
 */

export const STATEMENT_LANGUAGES = ['en', 'uk'] as const;
export type StatementLanguage = (typeof STATEMENT_LANGUAGES)[number];

export interface StatementsConfig {
  readonly issuerName: string | undefined;
  readonly issuerAddress: string | undefined;
  readonly issuerTaxId: string | undefined;
  /** who answers questions about a statement (e-mail, phone) */
  readonly contact: string | undefined;
  /** how and within how long a figure is disputed */
  readonly dispute: string | undefined;
  readonly language: StatementLanguage;
}

export const EMPTY_STATEMENTS_CONFIG: StatementsConfig = {
  issuerName: undefined,
  issuerAddress: undefined,
  issuerTaxId: undefined,
  contact: undefined,
  dispute: undefined,
  language: 'en',
};

// one line of printed text: no control characters, short enough for a statement's header
const line = (max: number) =>
  z
    .string()
    .max(max, `at most ${max} characters`)
    .regex(/^[^\u0000-\u0008\u000b-\u001f\u007f]*$/, 'control characters are not allowed');

const FIELDS = {
  RECON_ISSUER_NAME: ['issuerName', line(200)],
  RECON_ISSUER_ADDRESS: ['issuerAddress', line(300)],
  RECON_ISSUER_TAX_ID: ['issuerTaxId', line(40).regex(/^[\p{L}\p{N} ./-]+$/u, 'letters, digits, spaces . / - only')],
  RECON_STATEMENT_CONTACT: ['contact', line(300)],
  RECON_STATEMENT_DISPUTE: ['dispute', line(600)],
  RECON_STATEMENT_LANGUAGE: ['language', z.enum(STATEMENT_LANGUAGES, { message: 'expected uk or en' })],
} as const;

export const STATEMENT_VARIABLES = [
  {
    name: 'RECON_ISSUER_NAME',
    default: '(unset: "—" on statements)',
    example: 'ТОВ «Маркетплейс»',
    meaning: "the marketplace's legal name, at the head of every statement",
  },
  {
    name: 'RECON_ISSUER_ADDRESS',
    default: '(unset)',
    example: 'вул. Хрещатик, 1, Київ, 01001',
    meaning: "the marketplace's registered address, on every statement",
  },
  {
    name: 'RECON_ISSUER_TAX_ID',
    default: '(unset)',
    example: '12345678',
    meaning: "the marketplace's tax id (EDRPOU, VAT number), on every statement",
  },
  {
    name: 'RECON_STATEMENT_CONTACT',
    default: '(unset)',
    example: 'payouts@marketplace.example, +380 44 000 00 00',
    meaning: 'whom a sub-merchant asks about a statement (printed on it)',
  },
  {
    name: 'RECON_STATEMENT_DISPUTE',
    default: '(unset)',
    example: 'Reply within 30 days of the issue date to dispute a figure.',
    meaning: 'how a figure is disputed (printed on every statement)',
  },
  {
    name: 'RECON_STATEMENT_LANGUAGE',
    default: 'en',
    example: 'uk',
    meaning: "statements' language (uk or en) for sub-merchants whose directory row has no `language`",
  },
  {
    name: 'RECON_STATEMENT_WORKERS',
    default: '1',
    example: '2',
    meaning:
      'worker threads writing the statements of different sub-merchants at once, for a month of 5,000 lines or more (1: all in the main thread; 1–16; up to the cores)',
  },
] as const;

/**
 * Worker threads for the statements when RECON_STATEMENT_WORKERS is unset: none (the run's own thread). On the
 * 2-core machine, shared and loaded, two workers issued a 10k month's statements in 1.46 times the time with
 * 1.24 times the CPU (docs/scale.md, "Where the time goes"): a deployment with idle cores sets them, up to
 * `os.availableParallelism()`.
 */
export const defaultStatementWorkers = (): number => 1;

export const MAX_STATEMENT_WORKERS = 16;

/** RECON_STATEMENT_WORKERS for callers not handed the runtime's config (the demo, the monthly job, benchmarks). */
export function statementWorkersFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.RECON_STATEMENT_WORKERS?.trim();
  if (raw === undefined || raw === '') return defaultStatementWorkers();
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_STATEMENT_WORKERS)
    throw new RangeError(
      `RECON_STATEMENT_WORKERS: expected a whole number from 1 to ${MAX_STATEMENT_WORKERS}, got ${JSON.stringify(raw)}`,
    );
  return n;
}

/** The statements' settings of an environment, every bad value named by its variable. */
export function statementsConfigFrom(env: NodeJS.ProcessEnv): {
  config: StatementsConfig;
  issues: Array<{ variable: string; problem: string }>;
} {
  const issues: Array<{ variable: string; problem: string }> = [];
  const out: Record<string, unknown> = { ...EMPTY_STATEMENTS_CONFIG };
  for (const [variable, [field, schema]] of Object.entries(FIELDS)) {
    const raw = env[variable]?.trim();
    if (raw === undefined || raw === '') continue;
    const parsed = (schema as z.ZodType).safeParse(raw);
    if (parsed.success) out[field] = parsed.data;
    else issues.push({ variable, problem: parsed.error.issues.map((i) => i.message).join('; ') });
  }
  return { config: out as unknown as StatementsConfig, issues };
}

let fromEnv: StatementsConfig | undefined;

/** For callers not handed the runtime's config (the demo, the monthly job): the process's, read once. */
export function statementsConfigFromEnv(): StatementsConfig {
  fromEnv ??= statementsConfigFrom(process.env).config;
  return fromEnv;
}

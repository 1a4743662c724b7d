import type { PspProject } from '../../../src/config/env';

/** The PSP_* variables that point a recon child process at one PSP project (a sandbox's, in tests). */
export function pspEnv(
  p: Pick<PspProject, 'baseUrl' | 'reportUrl' | 'posId' | 'apiKey' | 'apiSecret' | 'endpointsKey'>,
): Record<string, string> {
  return {
    PSP_BASE_URL: p.baseUrl,
    PSP_REPORT_URL: p.reportUrl,
    PSP_POS_ID: p.posId,
    PSP_API_KEY: p.apiKey,
    PSP_API_SECRET: p.apiSecret,
    PSP_ENDPOINTS_KEY: p.endpointsKey,
  };
}

/**
 * The environment of a recon child process: this database, this PSP project (a sandbox's), no inherited
 * PSP_* or RECON_* variables from the test runner, and whatever else the test sets.
 */
export function reconEnv(opts: {
  databaseUrl: string;
  project?: PspProject;
  timezone?: string;
  extra?: Record<string, string>;
}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      k.startsWith('PSP_') ||
      k.startsWith('RECON_') ||
      k.startsWith('WEBHOOK_') ||
      k === 'DATABASE_URL' ||
      k === 'EVENTSTORE_URL'
    )
      continue;
    env[k] = v;
  }
  env.DATABASE_URL = opts.databaseUrl;
  env.RECON_TIMEZONE = opts.timezone ?? 'UTC';
  env.RECON_LOG_LEVEL = 'info';
  env.RECON_REPORT_MAX_WAIT_MS = '20000';
  if (opts.project) Object.assign(env, pspEnv(opts.project));
  Object.assign(env, opts.extra ?? {});
  return env;
}

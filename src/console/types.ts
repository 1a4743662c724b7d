import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BankConfig } from '../config/bank';
import type { Sql } from '../db/connect';
import type { ExceptionPolicy } from '../exceptions/severity';
import type { Logger } from '../log';
import type { Directory } from '../people/directory';
import type { Scheduler } from '../scheduler/scheduler';
import type { EventStore } from '../store/types';
import type { Language } from './i18n';

/** What the console works with: the worker's database, store, users, settings and scheduler. */
export interface ConsoleDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly directory: () => Promise<Directory>;
  /** RECON_AUDITOR_TOKEN: logs in as a viewer, as on the auditor API */
  readonly auditorToken: string | undefined;
  readonly timezone: string;
  /** RECON_OUT_DIR: where the statements are written */
  readonly outDir: string;
  /** whose X-Forwarded-Proto is believed (the webhook receiver's proxy settings) */
  readonly trust: { readonly trustProxy: boolean; readonly trustedProxies: readonly string[] };
  readonly scheduler: Pick<Scheduler, 'runNow' | 'schedules'>;
  readonly log: Logger;
  /**
   * failed logins per client address (src/http/rate-limit.ts `createRejectionLimiter`, made by the server that
   * mounts the console: LOGIN_LIMIT)
   */
  readonly loginLimiter: LoginLimiter;
  /** the exceptions policy in force (RECON_CONFIG's `exceptions`); default: severity.ts's */
  readonly policy?: ExceptionPolicy;
  /** RECON_CONFIG's bank section: the accounts a payout run is paid from */
  readonly bank?: BankConfig;
}

/** What the console needs of a rejection limiter (src/http/rate-limit.ts): spend on a failure, ask before trying. */
export interface LoginLimiter {
  take(sender: string): boolean;
  exhausted(sender: string): boolean;
}

/** The request as the console handles it: its path, query, language, whether it came over TLS. */
export interface Request {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly lang: Language;
  readonly secure: boolean;
  readonly sessionId: string | undefined;
}

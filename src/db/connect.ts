import net from 'node:net';
import postgres from 'postgres';
import type { Config } from '../config/env';
import type { Logger } from '../log';
import { installDriverGuard } from './driver-guard';
import { ensureEmbeddedPostgres, stopEmbeddedPostgresIfLastUser } from './embedded';
import { migrate } from './migrate';
import type { Sql } from './sql';

export type { Sql } from './sql';

export interface Database {
  readonly sql: Sql;
  /** Closes the pool; stops the embedded server when this was its last recon user. */
  close(): Promise<void>;
}

export const APPLICATION_PREFIX = 'recon:';

/**
 * The driver's sockets with TCP_NODELAY (the driver leaves Nagle on): a message the driver writes on its own
 * after another (COPY's end, a Bind after its Describe) otherwise waits for the server's delayed ACK, about
 * 40 ms; a COPY of ten rows took 90 ms instead of 2. The driver writes the startup message once this returns
 * (a socket buffers writes until it is connected) and makes a new socket for every reconnection.
 */
function noDelaySocket(o: { host: string[]; port: number[]; path?: string | false }): net.Socket {
  const s = o.path ? net.connect(o.path) : net.connect(o.port[0]!, o.host[0]!);
  s.setNoDelay(true);
  return s;
}

export function connect(url: string, opts: { max?: number; applicationName?: string } = {}): Sql {
  return connectWith(url, opts);
}

/**
 * Where a pool connects, as plain data (a pool cannot cross to a worker thread; this can): server, database,
 * role and the connection's parameters.
 */
export interface ConnectionSpec {
  readonly host: readonly string[];
  readonly port: readonly number[];
  readonly path: string | false;
  readonly database: string;
  readonly user: string;
  readonly pass: string;
  readonly ssl: boolean | string;
  readonly connection: Readonly<Record<string, string>>;
}

/** `sql`'s server, database and role, or undefined when they cannot be handed on (a password or TLS given as code). */
export function connectionSpecOf(sql: Sql): ConnectionSpec | undefined {
  const o = (sql as unknown as { options?: Record<string, unknown> }).options;
  if (!o || typeof o.pass !== 'string' || !['boolean', 'string'].includes(typeof o.ssl)) return undefined;
  const connection = Object.fromEntries(
    Object.entries((o.connection ?? {}) as Record<string, unknown>).filter(([, v]) => typeof v === 'string'),
  ) as Record<string, string>;
  return {
    host: o.host as string[],
    port: o.port as number[],
    path: (o.path as string | false | undefined) || false,
    database: o.database as string,
    user: o.user as string,
    pass: o.pass,
    ssl: o.ssl as boolean | string,
    connection,
  };
}

/** A pool to where `spec` says, with the settings of `connect` (a worker thread's own). */
export function connectTo(spec: ConnectionSpec, opts: { max?: number } = {}): Sql {
  const { connection, ...where } = spec;
  return connectWith(
    { ...where, host: [...where.host], port: [...where.port], ...(where.path ? {} : { path: undefined }) },
    { max: opts.max ?? 10, applicationName: connection.application_name },
    connection,
  );
}

function connectWith(
  to: string | object,
  opts: { max?: number; applicationName?: string | undefined },
  connection: Readonly<Record<string, string>> = {},
): Sql {
  installDriverGuard();
  const options = {
    max: opts.max ?? 10,
    onnotice: () => {},
    // int8 arrives as bigint: money and positions never pass through a float.
    types: { bigint: postgres.BigInt },
    connection: { ...connection, application_name: opts.applicationName ?? `${APPLICATION_PREFIX}${process.pid}` },
    idle_timeout: 30,
    connect_timeout: 10,
    // Seconds before a connection that failed tries again. The library's default grows to 20 s across the
    // pool during an outage: requests then waited up to 20 s for their 503, and kept failing for as long
    // after the server was back. Attempts are made only for waiting queries, so a short cap costs nothing.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    // documented by the driver (README "Custom socket") but missing from its option types
    ...({ socket: noDelaySocket } as object),
  };
  // the driver reads its options from the second argument after a URL, else from the first alone
  return (typeof to === 'string' ? postgres(to, options) : postgres({ ...to, ...options })) as unknown as Sql;
}

/**
 * Opens the configured database (or the embedded one) and applies pending migrations. `signal` (a command's
 * SIGINT/SIGTERM) stops the waits on the way, for the embedded server's start/stop lock and for another
 * process's migrations, and fails with its reason.
 */
export async function openDatabase(
  config: Config,
  log: Logger,
  opts: { max?: number; migrate?: boolean; signal?: AbortSignal } = {},
): Promise<Database> {
  const { signal } = opts;
  if (config.databaseUrl !== undefined) {
    const sql = connect(config.databaseUrl, { max: opts.max ?? 10 });
    try {
      if (opts.migrate !== false) await migrate(sql, log, undefined, { signal });
    } catch (e) {
      await sql.end({ timeout: 5 }).catch(() => {});
      throw e;
    }
    return { sql, close: () => sql.end({ timeout: 5 }) };
  }
  // Embedded: one connection held open for the process's lifetime marks it as a user of the server (pool
  // connections come and go with idle_timeout). It is opened under the start/stop lock, so a process
  // stopping the server as its last user either sees this one or stops before this one looks.
  let presence: Sql | undefined;
  const server = await ensureEmbeddedPostgres(
    config.dataDir,
    log,
    async (s) => {
      presence = postgres(s.url, {
        max: 1,
        idle_timeout: 0,
        onnotice: () => {},
        connection: { application_name: `${APPLICATION_PREFIX}${process.pid}` },
      }) as unknown as Sql;
      await presence`select 1`;
    },
    { signal },
  );
  const sql = connect(server.url, { max: opts.max ?? 10 });
  const closeAll = async () => {
    await sql.end({ timeout: 5 });
    await stopEmbeddedPostgresIfLastUser(config.dataDir, log, async () => {
      try {
        const [row] = await presence!<{ others: number }[]>`
          select count(*)::int4 as others from pg_stat_activity
          where application_name like ${APPLICATION_PREFIX + '%'} and application_name <> ${APPLICATION_PREFIX + process.pid}`;
        return row?.others === 0;
      } catch {
        return false; // the server is gone or unreachable: nothing of ours to stop
      } finally {
        await presence!.end({ timeout: 5 });
      }
    });
  };
  try {
    if (opts.migrate !== false) await migrate(sql, log, undefined, { signal });
  } catch (e) {
    await closeAll().catch(() => {});
    throw e;
  }
  let closing: Promise<void> | undefined;
  return {
    sql,
    close: () => (closing ??= closeAll()),
  };
}

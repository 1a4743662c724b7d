import postgres from 'postgres';
import type { Config } from '../config/env';
import type { Logger } from '../log';
import { ensureEmbeddedPostgres, stopEmbeddedPostgres } from './embedded';
import { migrate } from './migrate';

export type Sql = postgres.Sql<{ bigint: bigint }>;

export interface Database {
  readonly sql: Sql;
  /** Closes the pool; stops the embedded server when this was its last recon user. */
  close(): Promise<void>;
}

export const APPLICATION_PREFIX = 'recon:';

export function connect(url: string, opts: { max?: number; applicationName?: string } = {}): Sql {
  return postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    // int8 arrives as bigint: money and positions never pass through a float.
    types: { bigint: postgres.BigInt },
    connection: { application_name: opts.applicationName ?? `${APPLICATION_PREFIX}${process.pid}` },
    idle_timeout: 30,
    connect_timeout: 10,
  }) as unknown as Sql;
}

/** Opens the configured database (or the embedded one) and applies pending migrations. */
export async function openDatabase(config: Config, log: Logger, opts: { max?: number; migrate?: boolean } = {}): Promise<Database> {
  let url = config.databaseUrl;
  let embedded = false;
  if (url === undefined) {
    const server = await ensureEmbeddedPostgres(config.dataDir, log);
    url = server.url;
    embedded = true;
  }
  const sql = connect(url, { max: opts.max ?? 10 });
  if (opts.migrate !== false) await migrate(sql, log);
  return {
    sql,
    async close() {
      let last = false;
      if (embedded) {
        try {
          const [row] = await sql<{ others: bigint }[]>`
            select count(*)::int8 as others from pg_stat_activity
            where application_name like ${APPLICATION_PREFIX + '%'} and application_name <> ${APPLICATION_PREFIX + process.pid}`;
          last = (row?.others ?? 0n) === 0n;
        } catch {
          last = false;
        }
      }
      await sql.end({ timeout: 5 });
      if (embedded && last) await stopEmbeddedPostgres(config.dataDir, log);
    },
  };
}

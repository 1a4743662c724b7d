import { randomBytes } from 'node:crypto';
import { connect, type Sql } from '../../src/db/connect';
import { migrate } from '../../src/db/migrate';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { serverUrl } from './db';

export interface CollatedDatabase {
  readonly url: string;
  readonly sql: Sql;
  readonly store: EventStore;
  drop(): Promise<void>;
}

/**
 * A migrated database on the test server collating text in C (as the embedded server is initialised) or in
 * en-US by ICU (as an operator's server given by DATABASE_URL usually does: upper and lower case interleaved,
 * "alpha" before "Beta" where C puts "Beta" first). A locale other than the template's needs template0, so it is
 * migrated here rather than copied from the run's template.
 */
export async function createCollatedDatabase(locale: 'C' | 'icu'): Promise<CollatedDatabase> {
  const name = `t_${locale.toLowerCase()}_${randomBytes(5).toString('hex')}`;
  const admin = connect(serverUrl(), { max: 1 });
  await admin.unsafe(
    locale === 'icu'
      ? `create database ${name} template template0 locale_provider icu icu_locale 'en-US' locale 'C'`
      : `create database ${name} template template0 locale 'C'`,
  );
  await admin.end();
  const u = new URL(serverUrl());
  u.pathname = `/${name}`;
  const sql = connect(u.toString(), { max: 4 });
  await migrate(sql, silentLogger);
  return {
    url: u.toString(),
    sql,
    store: createPostgresEventStore(sql),
    async drop() {
      await sql.end({ timeout: 5 });
      const a = connect(serverUrl(), { max: 1 });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

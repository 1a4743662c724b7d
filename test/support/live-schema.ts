import type { Sql } from '../../src/db/connect';

/** Schema of the live build of a projection, or undefined before its first build went live. */
export async function liveSchema(sql: Sql, name: string): Promise<string | undefined> {
  const [r] = await sql<
    { schema_name: string }[]
  >`select schema_name from projection_builds where name = ${name} and status = 'live'`;
  return r?.schema_name;
}

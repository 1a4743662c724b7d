import type postgres from 'postgres';

/** A connection pool as recon uses it: bigint columns come back as bigint (money is never a float). */
export type Sql = postgres.Sql<{ bigint: bigint }>;

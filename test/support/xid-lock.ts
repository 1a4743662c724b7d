import { connect } from '../../src/db/connect';
import { serverUrl } from './db';

// Any fixed key: only the tests that move the server's transaction counter use it.
const TRANSACTION_COUNTER_LOCK = 7_315_220_777n;

/**
 * The test server's transaction counter is shared by every test file. Tests that spend many transaction ids
 * (crossing a power of ten, advancing past a "restored" event) and tests that need the counter to stay
 * below such an event hold this lock meanwhile, so that one never moves the counter under the other.
 * Advisory locks belong to a database, so it is taken in the server's maintenance database.
 */
export async function withTransactionCounterLock<T>(fn: () => Promise<T>): Promise<T> {
  const sql = connect(serverUrl(), { max: 1 });
  const conn = await sql.reserve();
  try {
    await conn`select pg_advisory_lock(${TRANSACTION_COUNTER_LOCK})`;
    try {
      return await fn();
    } finally {
      await conn`select pg_advisory_unlock(${TRANSACTION_COUNTER_LOCK})`;
    }
  } finally {
    conn.release();
    await sql.end({ timeout: 5 });
  }
}

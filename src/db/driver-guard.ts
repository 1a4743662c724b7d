/**
 * A guard against a known defect of the postgres driver (porsager/postgres 3.4.9, issues #1154 and #1208,
 * unfixed upstream at this version): when the server goes away during a transaction, the driver's
 * ROLLBACK is written to a connection whose socket is already gone, from a setImmediate callback, and
 * the TypeError it throws there escapes every await and ends the process. Stopping PostgreSQL under load
 * killed `recon serve` this way in 3 of 4 runs (test/faults/outage-postgres.test.ts).
 *
 * The query concerned has already failed (the caller got its connection error, e.g. a 503), and the
 * driver's connection object recovers by itself on a later reconnect, so this one error, recognised by
 * its exact shape, is logged instead of ending the process. Any other uncaught exception still ends it,
 * as Node would. Remove once the driver carries the upstream fix (a guard in `nextWrite`).
 */

let installed = false;

export function isDriverNullSocketWrite(e: unknown): boolean {
  if (!(e instanceof TypeError)) return false;
  const stack = e.stack ?? '';
  return /reading 'write'|evaluating 'socket\.write'/.test(e.message) && /\bnextWrite\b/.test(stack) && /[/\\]postgres[/\\]src[/\\]connection\.js/.test(stack);
}

export function installDriverGuard(): void {
  if (installed) return;
  installed = true;
  process.on('uncaughtException', (e) => {
    if (isDriverNullSocketWrite(e)) {
      process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: 'warn', msg: 'database connection lost during a transaction (driver defect absorbed; the query had already failed)' }) + '\n');
      return;
    }
    // Another listener (a test runner) handles the rest; alone, behave as Node does without a listener.
    if (process.listenerCount('uncaughtException') > 1) return;
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}

/**
 * A guard against a known defect of the postgres driver (porsager/postgres 3.4.9, issues #1154 and #1208,
 * unfixed upstream at this version): when the server goes away during a transaction, the driver's
 * ROLLBACK is written to a connection whose socket is already gone, from a setImmediate callback, and
 * the TypeError it throws there escapes every await and ends the process. Stopping PostgreSQL under load
 * killed `recon serve` this way in 3 of 4 runs (test/faults/outage-postgres.test.ts).
 *
 * The query concerned has already failed (the caller got its connection error, e.g. a 503), and the
 * driver's connection object recovers by itself on a later reconnect, so this one error, recognised by
 * its exact shape, is logged instead of ending the process; so is a lost-connection rejection of a
 * driver query nobody awaited. Any other uncaught exception or rejection still ends it, as Node would.
 * Remove once the driver carries the upstream fix (a guard in `nextWrite`, PR #1209).
 */

let installed = false;

export function isDriverNullSocketWrite(e: unknown): boolean {
  if (!(e instanceof TypeError)) return false;
  const stack = e.stack ?? '';
  return (
    /reading 'write'|evaluating 'socket\.write'/.test(e.message) &&
    /\bnextWrite\b/.test(stack) &&
    /[/\\]postgres[/\\]src[/\\]connection\.js/.test(stack)
  );
}

const CONNECTION_LOST = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
]);

/**
 * A driver query that failed because the connection went away and that nobody awaited (seen once in
 * about ten outage runs, from the driver's own bookkeeping around a lost transaction): no caller waits
 * for it, so it is logged, not allowed to end the process.
 */
export function isDriverLostConnection(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string' || !CONNECTION_LOST.has(code)) return false;
  // The driver marks an error it fails a query with by giving it the query's text (queryError). The stack alone
  // does not tell: a refused connect is an error made by node:net, and a query run with `unsafe` has no origin
  // frames to append, so its stack names no driver file (an outage run in a full suite ended that way; alone it passes).
  const stack = e.stack ?? '';
  return (
    /[/\\]postgres[/\\]src[/\\]/.test(stack) ||
    typeof (e as { query?: unknown }).query === 'string' ||
    onlyNetFrames(stack)
  );
}

/**
 * A connect refused or reset, raised by node:net itself with no frame of any caller: the only component of
 * recon that opens raw sockets to a database is the driver (HTTP clients wrap theirs in a `fetch failed`).
 */
function onlyNetFrames(stack: string): boolean {
  const frames = stack.split('\n').filter((l) => /^\s+at /.test(l));
  return frames.length > 0 && frames.every((l) => /\(node:net:\d+:\d+\)$|^\s+at node:net:/.test(l));
}

export function installDriverGuard(): void {
  if (installed) return;
  installed = true;
  process.on('uncaughtException', (e) => {
    if (isDriverNullSocketWrite(e)) {
      process.stderr.write(
        JSON.stringify({
          time: new Date().toISOString(),
          level: 'warn',
          msg: 'database connection lost during a transaction (driver defect absorbed; the query had already failed)',
        }) + '\n',
      );
      return;
    }
    if (isDriverLostConnection(e)) {
      process.stderr.write(
        JSON.stringify({
          time: new Date().toISOString(),
          level: 'warn',
          msg: 'database connection lost outside any awaited query (ignored)',
          code: (e as unknown as { code: string }).code,
        }) + '\n',
      );
      return;
    }
    // Another listener (a test runner) handles the rest; alone, behave as Node does without a listener.
    if (process.listenerCount('uncaughtException') > 1) return;
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
  process.on('unhandledRejection', (reason) => {
    if (isDriverLostConnection(reason)) {
      const query = String((reason as { query?: unknown }).query ?? '')
        .replace(/\s+/g, ' ')
        .slice(0, 60);
      process.stderr.write(
        JSON.stringify({
          time: new Date().toISOString(),
          level: 'warn',
          msg: 'database query failed with its connection and nobody awaited it (ignored)',
          code: (reason as { code: string }).code,
          query,
        }) + '\n',
      );
      return;
    }
    if (process.listenerCount('unhandledRejection') > 1) return;
    // Alone, keep Node's default: an unhandled rejection ends the process.
    throw reason;
  });
}

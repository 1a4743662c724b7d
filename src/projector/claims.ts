import type { Sql } from '../db/connect';
import type { Logger } from '../log';

/**
 * Which worker runs which projection, when several share one PostgreSQL (on one machine or several): a
 * session advisory lock per projection name, held on a connection of its own for as long as the worker runs
 * the projection. A worker takes the projections whose claim it can get (at most `max`); a worker that dies
 * loses its connection and its claims with it, and another takes them over at its next poll.
 *
 * A claim only spreads the work: exactly once still rests on the per-batch transaction lock and the
 * checkpoint re-read under it (checkpoints.ts), so a worker that lost its claim's connection and has not
 * noticed yet, or a runner that claims nothing (`recon project` without --share), can never apply an event
 * twice.
 */

// Advisory lock class of the claims (the second key is hashtext(name)); 7315 is the per-batch lock.
const CLAIM_CLASS = 7316;

export interface Claims {
  /** Keeps the claims still held among `names` and takes free ones, up to the limit; the names held now. */
  refresh(names: readonly string[]): Promise<string[]>;
  /** Lets a projection go (another worker may take it). */
  release(name: string): Promise<void>;
  /** Lets every claim go and gives the connection back. */
  close(): Promise<void>;
}

type Reserved = Awaited<ReturnType<Sql['reserve']>>;

export function projectionClaims(sql: Sql, opts: { max?: number; log: Logger }): Claims {
  const max = opts.max ?? Number.POSITIVE_INFINITY;
  let conn: Reserved | undefined;
  let pid: number | undefined;
  const held = new Set<string>();

  /** The claims' connection, the same server session as when the claims were taken (or none held). */
  async function session(): Promise<Reserved> {
    conn ??= await sql.reserve();
    const [row] = await conn<{ pid: number }[]>`select pg_backend_pid() as pid`;
    if (pid !== undefined && row!.pid !== pid && held.size > 0) {
      opts.log.warn('projection claims lost with their connection; taking them again', { projections: [...held] });
      held.clear();
    }
    pid = row!.pid;
    return conn;
  }

  function drop(): void {
    conn?.release();
    conn = undefined;
    pid = undefined;
    held.clear();
  }

  return {
    async refresh(names) {
      try {
        const c = await session();
        for (const n of held) if (!names.includes(n)) await this.release(n);
        for (const name of names) {
          if (held.size >= max) break;
          if (held.has(name)) continue;
          const [r] = await c<{ ok: boolean }[]>`select pg_try_advisory_lock(${CLAIM_CLASS}, hashtext(${name})) as ok`;
          if (r?.ok) {
            held.add(name);
            opts.log.info('projection claimed by this worker', { projection: name, pid: process.pid });
          }
        }
        return names.filter((n) => held.has(n));
      } catch (e) {
        // the session is gone or unusable: so are its claims (the server let them go with it)
        drop();
        throw e;
      }
    },
    async release(name) {
      if (!held.delete(name) || !conn) return;
      await conn`select pg_advisory_unlock(${CLAIM_CLASS}, hashtext(${name}))`;
    },
    async close() {
      const c = conn;
      if (!c) return;
      // bounded: at a shutdown with the server gone, the connection's end lets the claims go anyway
      await Promise.race([
        c`select pg_advisory_unlock_all()`.catch(() => {}),
        new Promise((r) => setTimeout(r, 1000).unref()),
      ]);
      drop();
    },
  };
}

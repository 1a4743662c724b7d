import type { Command } from 'commander';
import { checkBuildsOnStore, type BuildOnStore } from '../../projector/runner';
import {
  advanceTransactionCounter,
  readTransactionCounter,
  type TransactionCounter,
} from '../../store/transaction-counter';
import { withRuntime, type Runtime } from '../runtime';

/**
 * `recon store check` and `recon store advance-xid`: after a restore (docs/store.md, "Backups and
 * restores"), whether the PostgreSQL event store's transaction counter lets it accept appends, and whether
 * every projection build is still on this store (its checkpoint below the head, holding the event it
 * applied last).
 */

function summary(c: TransactionCounter): string {
  const last = c.lastCommit === null ? '(no events)' : c.lastCommit.toString();
  const verdict = c.ok
    ? 'appends accepted'
    : `appends REFUSED: the counter is ${(c.lastCommit! - c.nextTransaction + 1n).toLocaleString('en-US')} behind (run recon store advance-xid)`;
  return `last event's transaction id: ${last}\nserver's next transaction id: ${c.nextTransaction}\n${verdict}\n`;
}

function readModels(builds: readonly BuildOnStore[]): string {
  if (builds.length === 0) return 'read models: none built yet\n';
  const lines = builds.map(
    (b) =>
      `  ${b.name} (${b.schema}, ${b.status}) at ${b.checkpoint ?? '(nothing applied)'}: ${b.problem ? `NOT ON THIS STORE: ${b.problem.message}` : 'on this store'}`,
  );
  return `read models:\n${lines.join('\n')}\n`;
}

function onPostgres(rt: Runtime): boolean {
  if (rt.store.backend === 'postgres') return true;
  process.stdout.write(
    `event store backend: ${rt.store.backend}; no transaction counter to check (its positions are its own)\n`,
  );
  return false;
}

export function register(program: Command): void {
  const store = program
    .command('store')
    .description('the event store: check it, and move its transaction counter on after a logical restore');
  store
    .command('check')
    .description(
      'after a restore: whether the PostgreSQL event store accepts appends (its transaction counter must be above every ' +
        'stored event), and whether every read model is still on this store (exit 1 when either is not)',
    )
    .action(async () => {
      await withRuntime(async (rt) => {
        if (onPostgres(rt)) {
          const head = await rt.store.headPosition();
          process.stdout.write(
            `event store backend: postgres; head position ${head ? `${head.commit}/${head.prepare}` : '(empty)'}\n`,
          );
          const c = await readTransactionCounter(rt.sql);
          process.stdout.write(summary(c));
          if (!c.ok) process.exitCode = 1;
        }
        const builds = await checkBuildsOnStore(rt);
        process.stdout.write(readModels(builds));
        if (builds.some((b) => b.problem)) {
          process.stdout.write('rebuild the read models not on this store: recon project --rebuild\n');
          process.exitCode = 1;
        }
      });
    });
  store
    .command('advance-xid')
    .description(
      'after restoring the database from a logical dump (pg_dump) into another server: spend transaction ids until the ' +
        "server's counter is above every stored event, so that appends are accepted again and sort after them (a no-op when it is already)",
    )
    .action(async () => {
      await withRuntime(async (rt, signal) => {
        if (!onPostgres(rt)) return;
        const started = Date.now();
        const { before, after } = await advanceTransactionCounter(rt.sql, {
          signal,
          onProgress: (p) =>
            rt.log.info('advancing the transaction counter', { next: p.next.toString(), target: p.target.toString() }),
        });
        process.stdout.write(
          before.ok
            ? `nothing to do: ${summary(before)}`
            : `advanced by ${(after.nextTransaction - before.nextTransaction).toLocaleString('en-US')} transaction ids in ${((Date.now() - started) / 1000).toFixed(1)} s\n${summary(after)}`,
        );
      });
    });
}

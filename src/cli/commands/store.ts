import type { Command } from 'commander';
import { advanceTransactionCounter, readTransactionCounter, type TransactionCounter } from '../../store/transaction-counter';
import { withRuntime, type Runtime } from '../runtime';

/**
 * `recon store check` and `recon store advance-xid`: the PostgreSQL event store's transaction counter
 * after a restore (docs/store.md, "Backups and restores").
 */

function summary(c: TransactionCounter): string {
  const last = c.lastCommit === null ? '(no events)' : c.lastCommit.toString();
  const verdict = c.ok ? 'appends accepted' : `appends REFUSED: the counter is ${(c.lastCommit! - c.nextTransaction + 1n).toLocaleString('en-US')} behind (run recon store advance-xid)`;
  return `last event's transaction id: ${last}\nserver's next transaction id: ${c.nextTransaction}\n${verdict}\n`;
}

function onPostgres(rt: Runtime): boolean {
  if (rt.store.backend === 'postgres') return true;
  process.stdout.write(`event store backend: ${rt.store.backend}; its positions are its own, nothing to check here\n`);
  return false;
}

export function register(program: Command): void {
  const store = program.command('store').description('the event store: check it, and move its transaction counter on after a logical restore');
  store
    .command('check')
    .description('whether the PostgreSQL event store accepts appends: its transaction counter must be above every stored event (exit 1 when not)')
    .action(async () => {
      await withRuntime(async (rt) => {
        if (!onPostgres(rt)) return;
        const head = await rt.store.headPosition();
        process.stdout.write(`event store backend: postgres; head position ${head ? `${head.commit}/${head.prepare}` : '(empty)'}\n`);
        const c = await readTransactionCounter(rt.sql);
        process.stdout.write(summary(c));
        if (!c.ok) process.exitCode = 1;
      });
    });
  store
    .command('advance-xid')
    .description('after restoring the database from a logical dump (pg_dump) into another server: spend transaction ids until the ' +
      'server\'s counter is above every stored event, so that appends are accepted again and sort after them (a no-op when it is already)')
    .action(async () => {
      await withRuntime(async (rt, signal) => {
        if (!onPostgres(rt)) return;
        const started = Date.now();
        const { before, after } = await advanceTransactionCounter(rt.sql, {
          signal,
          onProgress: (p) => rt.log.info('advancing the transaction counter', { next: p.next.toString(), target: p.target.toString() }),
        });
        process.stdout.write(before.ok
          ? `nothing to do: ${summary(before)}`
          : `advanced by ${(after.nextTransaction - before.nextTransaction).toLocaleString('en-US')} transaction ids in ${((Date.now() - started) / 1000).toFixed(1)} s\n${summary(after)}`);
      });
    });
}

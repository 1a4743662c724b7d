import type { Logger } from '../log';
import type { SyncProgress } from './sync';

/**
 * Sync progress: a status line rewritten in place on a terminal, structured log lines otherwise
 * (at most one every `everyMs`, plus one per finished window).
 */
export function createProgressReporter(opts: { log: Logger; stream?: NodeJS.WriteStream; everyMs?: number }): {
  update(p: SyncProgress): void;
  end(): void;
} {
  const stream = opts.stream ?? process.stderr;
  const tty = Boolean(stream.isTTY);
  const every = opts.everyMs ?? (tty ? 200 : 5000);
  let last = 0;
  let shown = false;
  return {
    update(p) {
      const now = Date.now();
      const boundary = p.phase === 'completed' || p.phase === 'failed';
      if (!boundary && now - last < every) return;
      last = now;
      if (tty) {
        const line = `sync ${p.windowsDone}/${p.windowsTotal} windows · ${p.records.toLocaleString('en-US')} records · ${p.recordsPerSecond.toLocaleString('en-US')}/s · ${p.phase} ${p.window.from.slice(0, 10)}..${p.window.to.slice(0, 10)}`;
        stream.write(`\r\x1b[2K${line}`);
        shown = true;
      } else if (!boundary) {
        opts.log.info('sync progress', {
          posId: p.posId,
          windowsDone: p.windowsDone,
          windowsTotal: p.windowsTotal,
          records: p.records,
          recordsPerSecond: p.recordsPerSecond,
          phase: p.phase,
        });
      }
    },
    end() {
      if (tty && shown) stream.write('\n');
    },
  };
}

import { runProjections } from './run';
import type { Report, RunnerDeps } from './runner-types';
import { onAppends } from './store-feed';

/**
 * Live mode (the worker): catches up, then waits for new events (the event store's watch,
 * or `pollMs` at the latest) and catches up again, until the signal is aborted. A failing run is
 * logged, told to `onError` (the worker's /readyz shows it until a run succeeds) and retried after `pollMs`.
 */
export async function followProjections(
  deps: RunnerDeps,
  opts: {
    signal: AbortSignal;
    pollMs?: number;
    batchSize?: number;
    onReport?: (r: Report) => void;
    onError?: (e: unknown) => void;
  },
): Promise<void> {
  const pollMs = Math.max(10, opts.pollMs ?? 1000);
  let wake: (() => void) | undefined;
  let pending = false;
  const notify = () => {
    pending = true;
    wake?.();
  };
  const unlisten = await onAppends(deps, notify);
  const onAbort = () => wake?.();
  opts.signal.addEventListener('abort', onAbort);
  try {
    while (!opts.signal.aborted) {
      pending = false;
      try {
        const r = await runProjections(deps, {
          signal: opts.signal,
          ...(opts.batchSize ? { batchSize: opts.batchSize } : {}),
        });
        opts.onReport?.(r);
      } catch (e) {
        if (opts.signal.aborted) break;
        deps.log.error('projection run failed; retrying', { error: e });
        opts.onError?.(e);
      }
      if (pending || opts.signal.aborted) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    await unlisten?.().catch(() => {});
  }
}

import { type Claims, projectionClaims } from './claims';
import { selectProjections } from './load';
import { runProjections } from './run';
import type { Report, RunnerDeps } from './runner-types';
import { onAppends } from './store-feed';

export interface FollowOptions {
  readonly signal: AbortSignal;
  readonly pollMs?: number;
  readonly batchSize?: number;
  /**
   * Share the projections with other workers (claims.ts): run only those whose claim this worker holds
   * (among `names`, default every one; at most `max`), and take free ones at every poll, so that the
   * projections of a worker that died are taken over. Without it, every projection is run (two runners on
   * one projection take turns batch by batch, as ever).
   */
  readonly share?: { readonly names?: readonly string[]; readonly max?: number };
  readonly onReport?: (r: Report) => void;
  readonly onError?: (e: unknown) => void;
}

/**
 * Live mode (the worker): catches up, then waits for new events (the event store's watch,
 * or `pollMs` at the latest) and catches up again, until the signal is aborted. A failing run is
 * logged, told to `onError` (the worker's /readyz shows it until a run succeeds) and retried after `pollMs`.
 */
export async function followProjections(deps: RunnerDeps, opts: FollowOptions): Promise<void> {
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
  const claims = opts.share ? projectionClaims(deps.sql, { log: deps.log, max: opts.share.max }) : undefined;
  try {
    while (!opts.signal.aborted) {
      pending = false;
      await runOnce(deps, opts, claims);
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
    await claims?.close();
  }
}

/** One catch-up of the projections this worker runs; a failure is logged and told, the next poll retries. */
async function runOnce(deps: RunnerDeps, opts: FollowOptions, claims: Claims | undefined): Promise<void> {
  try {
    let names: readonly string[] | undefined;
    if (claims) {
      const candidates = (await selectProjections(deps, opts.share?.names)).map((p) => p.name);
      names = await claims.refresh(candidates);
      if (names.length === 0) return;
    }
    const r = await runProjections(deps, {
      signal: opts.signal,
      ...(opts.batchSize ? { batchSize: opts.batchSize } : {}),
      ...(names ? { names } : {}),
    });
    opts.onReport?.(r);
  } catch (e) {
    if (opts.signal.aborted) return;
    deps.log.error('projection run failed; retrying', { error: e });
    opts.onError?.(e);
  }
}

import type { Sql } from '../src/db/connect';
import type { Logger } from '../src/log';

/**
 * What a benchmark (bench/<name>.ts exporting `run(ctx)`) is given by bench/run.ts. Each benchmark runs
 * in a process of its own (so peak RSS is its own) against a fresh, migrated database.
 */
export interface BenchContext {
  /** The benchmark's name (its file name without .ts). */
  readonly name: string;
  /** URL of this benchmark's fresh, migrated database. */
  readonly url: string;
  /** A pool (max 20) on that database; closed by the harness. */
  readonly sql: Sql;
  /** URL of the server's maintenance database, to create more databases (see createDatabase). */
  readonly serverUrl: string;
  readonly log: Logger;
  /** True for `npm run bench -- --quick`: smaller sizes, for a smoke run. */
  readonly quick: boolean;
  /** Records a figure: printed beside its reference as a ratio, and as one JSON line. */
  figure(f: Figure): void;
  /** A free line of text in the report (sizes, settings). */
  note(text: string): void;
  /** Another fresh database on the same server (migrated unless migrate: false), dropped at the end. */
  createDatabase(opts?: { migrate?: boolean; max?: number }): Promise<{ url: string; sql: Sql }>;
}

export interface Figure {
  /** What was measured ("batched append"). */
  readonly name: string;
  readonly value: number;
  /** "events/s", "ms", "MB". */
  readonly unit: string;
  /** The same work measured in the same run by a reference (a ceiling or a competitor). */
  readonly reference?: { readonly name: string; readonly value: number };
  /**
   * The target: value/reference ≥ minRatio, and/or value ≥ min, and/or value ≤ max.
   * `text` says it in words for the table.
   */
  readonly target?: {
    readonly minRatio?: number;
    readonly min?: number;
    readonly max?: number;
    readonly text?: string;
  };
}

export interface FigureResult extends Figure {
  readonly bench: string;
  readonly ratio: number | undefined;
  /** undefined when the figure has no target. */
  readonly met: boolean | undefined;
}

export function judge(bench: string, f: Figure): FigureResult {
  const ratio = f.reference && f.reference.value > 0 ? f.value / f.reference.value : undefined;
  let met: boolean | undefined;
  if (f.target) {
    met = true;
    if (f.target.minRatio !== undefined) met &&= ratio !== undefined && ratio >= f.target.minRatio;
    if (f.target.min !== undefined) met &&= f.value >= f.target.min;
    if (f.target.max !== undefined) met &&= f.value <= f.target.max;
  }
  return { ...f, bench, ratio, met };
}

/** Runs fn and returns its result with the wall time in milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const t0 = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, result };
}

/** Items per second. */
export const perSecond = (count: number, ms: number): number => (ms > 0 ? (count * 1000) / ms : 0);

/** Samples the resident set size every `everyMs` until stopped; returns the peak in bytes. */
export function sampleRss(everyMs = 20): { stop(): number } {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage.rss());
    },
  };
}

/** Runs up to `concurrency` workers over the items, in order of taking. */
export async function inParallel<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, worker: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async (_, worker) => {
      while (next < items.length) {
        const item = items[next++]!;
        await fn(item, worker);
      }
    }),
  );
}

export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  return n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

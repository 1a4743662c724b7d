import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { boundedMap } from '../../bounded-map';
import type { ConnectionSpec } from '../../db/connect';
import { ExportError, type ExportErrorCode } from '../errors';
import type { StatementJob, WrittenStatementFiles } from './statement-job';
import type { FromWorker, ToWorker, WorkerError, WorkerSetup } from './statement-worker';

/**
 * Statements of different sub-merchants written at once on worker threads: each worker is handed one
 * sub-merchant's statement (statement-job.ts) at a time, reads its lines itself and writes its workbook and PDF
 * (the writing is CPU-bound, and one thread leaves the machine's other cores idle). The run numbers the
 * statements before and lists the files after, in the sub-merchants' order, so the order they finish in
 * changes nothing. A failure stops the handing out; the statements under way are let finish (nothing is written
 * behind the caller's back once it is told), then the first error is thrown. An abort stops the workers at once.
 */

const WORKER_ENTRY = new URL('./statement-worker.mjs', import.meta.url);

export interface PoolOptions {
  readonly workers: number;
  readonly connection: ConnectionSpec;
  readonly linesPerDetailRead?: number;
  readonly signal?: AbortSignal;
}

const EXPORT_CODES: readonly ExportErrorCode[] = [
  'EXPORT_AMOUNT_TOO_LARGE',
  'EXPORT_WRITE_FAILED',
  'EXPORT_NO_POSITION',
  'EXPORT_BRIDGE_MISMATCH',
  'EXPORT_NOTHING_TO_ISSUE',
  'EXPORT_FILE_NAME_COLLISION',
];

/** A worker's error as the run throws it: an ExportError stays one; any other keeps its name, code and stack. */
function errorFrom(e: WorkerError): Error {
  if (e.name === 'ExportError' && EXPORT_CODES.includes(e.code as ExportErrorCode))
    return new ExportError(e.code as ExportErrorCode, e.message);
  const error = new Error(e.message) as Error & { code?: string };
  error.name = e.name;
  if (e.code !== undefined) error.code = e.code;
  if (e.stack) error.stack = e.stack;
  return error;
}

/** The temporary files of a statement whose worker stopped in the middle (each written as `.name.<random>.partial`). */
function removePartials(job: StatementJob, since: number): void {
  for (const file of [job.xlsx, job.pdf, job.audit]) {
    const dir = path.dirname(file);
    const prefix = `.${path.basename(file)}.`;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.startsWith(prefix) || !name.endsWith('.partial')) continue;
      const partial = path.join(dir, name);
      try {
        // only this run's: another's, begun before, is not this worker's to remove
        if (statSync(partial).mtimeMs >= since) rmSync(partial, { force: true });
      } catch {
        /* gone already */
      }
    }
  }
}

interface PoolWorker {
  write(job: StatementJob): Promise<WrittenStatementFiles>;
  /** ends the thread at once (an abort): the statement under way is left, its temporary files removed */
  stop(): void;
  /** ends the thread once its statement is written */
  close(): Promise<void>;
}

/** The statement a worker is writing, and its caller's promise. */
interface Pending {
  readonly job: StatementJob;
  /** when it was handed out, less a second: its temporary files are no older */
  readonly since: number;
  resolve(w: WrittenStatementFiles): void;
  reject(e: Error): void;
}

function startWorker(o: PoolOptions): PoolWorker {
  const setup: WorkerSetup = {
    connection: o.connection,
    ...(o.linesPerDetailRead ? { linesPerDetailRead: o.linesPerDetailRead } : {}),
  };
  const worker = new Worker(WORKER_ENTRY, { workerData: setup });
  let current: Pending | undefined;
  let stopped: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      stopped ??= new Error(`exited with code ${code}`);
      if (current) {
        removePartials(current.job, current.since);
        current.reject(
          new ExportError(
            'EXPORT_WRITE_FAILED',
            `the statement of ${current.job.subMerchantId} (${path.basename(current.job.xlsx)}, ${path.basename(current.job.pdf)}) was not written: its worker thread stopped (${stopped.message})`,
          ),
        );
        current = undefined;
      }
      resolve();
    });
  });
  worker.on('error', (e) => {
    stopped ??= e;
  });
  worker.on('message', (m: FromWorker) => {
    const job = current;
    current = undefined;
    if (!job) return;
    if (m.type === 'written') job.resolve({ lines: m.lines, files: m.files });
    else job.reject(errorFrom(m.error));
  });
  return {
    write: (job) =>
      new Promise((resolve, reject) => {
        if (stopped) {
          reject(new ExportError('EXPORT_WRITE_FAILED', `a statement worker thread stopped: ${stopped.message}`));
          return;
        }
        current = { job, since: Date.now() - 1000, resolve, reject };
        worker.postMessage({ type: 'write', job } satisfies ToWorker);
      }),
    stop: () => {
      stopped ??= new Error('stopped');
      void worker.terminate();
    },
    close: async () => {
      if (!stopped) worker.postMessage({ type: 'close' } satisfies ToWorker);
      await exited;
    },
  };
}

/**
 * `draw(item)` draws up a statement (in this thread: the header, the reserve, the previous statement); a free
 * worker writes it. Results in the items' order.
 */
export async function writeInWorkers<T>(
  items: readonly T[],
  draw: (item: T) => Promise<StatementJob>,
  o: PoolOptions,
  onWritten?: (w: WrittenStatementFiles, job: StatementJob) => void,
): Promise<WrittenStatementFiles[]> {
  o.signal?.throwIfAborted();
  const workers = Array.from({ length: Math.min(o.workers, items.length) }, () => startWorker(o));
  // an abort ends the statements under way at once (their temporary files removed), not after them
  const onAbort = () => {
    for (const w of workers) w.stop();
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await boundedMap(items, workers.length, o.signal, async (item, lane) => {
      const job = await draw(item);
      // another statement failed while this one was drawn: the run throws, so this result is never read
      if (lane.stopping()) return undefined as never;
      const written = await workers[lane.index]!.write(job);
      onWritten?.(written, job);
      return written;
    });
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    await Promise.all(workers.map((w) => w.close()));
  }
}

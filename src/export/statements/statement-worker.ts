import { parentPort, workerData } from 'node:worker_threads';
import { type ConnectionSpec, connectTo } from '../../db/connect';
import { createPostgresEventStore } from '../../store/postgres';
import { storePaymentEvents } from './details';
import { ledgerStatementQueries } from './queries';
import { type StatementJob, writeStatementFiles } from './statement-job';

/**
 * A worker thread of the statement pool (statement-pool.ts): writes the statements it is handed one at a time,
 * reading their lines and their payments' events through a connection of its own to the run's database, and
 * answers each with the files written or the error that stopped it.
 */

export interface WorkerSetup {
  readonly connection: ConnectionSpec;
  readonly linesPerDetailRead?: number;
}

export type ToWorker = { readonly type: 'write'; readonly job: StatementJob } | { readonly type: 'close' };

export type FromWorker =
  | { readonly type: 'written'; readonly lines: number; readonly files: import('./runs').IssuedFile[] }
  | { readonly type: 'failed'; readonly error: WorkerError };

/** An error as it crosses back to the run: its class's name, its code (ExportError's, a system call's, SQLSTATE). */
export interface WorkerError {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
  readonly stack?: string;
}

const setup = workerData as WorkerSetup;
// one statement at a time: its line cursor and a batch of its payments' events
const sql = connectTo(setup.connection, { max: 2 });
const store = createPostgresEventStore(sql);
const port = parentPort!;

function errorOf(e: unknown): WorkerError {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e) };
  const code = (e as { code?: unknown }).code;
  return {
    name: e.name,
    message: e.message,
    ...(typeof code === 'string' ? { code } : {}),
    ...(e.stack ? { stack: e.stack } : {}),
  };
}

port.on('message', async (m: ToWorker) => {
  if (m.type === 'close') {
    await sql.end({ timeout: 5 }).catch(() => undefined);
    port.close();
    return;
  }
  let answer: FromWorker;
  try {
    const written = await writeStatementFiles(m.job, {
      queries: ledgerStatementQueries(sql),
      paymentEvents: storePaymentEvents(sql, store, m.job.base.atPosition),
      ...(setup.linesPerDetailRead ? { linesPerDetailRead: setup.linesPerDetailRead } : {}),
    });
    answer = { type: 'written', lines: written.lines, files: [...written.files] };
  } catch (e) {
    answer = { type: 'failed', error: errorOf(e) };
  }
  port.postMessage(answer);
});

import { parentPort, threadId, workerData } from 'node:worker_threads';
import { connect } from '../db/connect';
import type { Logger } from '../log';
import { openEventStore } from '../store/open';
import { selectProjections } from './load';
import { runAll } from './run';
import type { ProjectionProgress, RunnerDeps } from './runner-types';
import { type ThreadJob, type ThreadMessage, threadErrorOf } from './threads';

/**
 * The body of a projection worker thread (threads.ts): its own pool and event store on the caller's
 * database, the named projections run as the caller would run them, its logs and progress sent back.
 */

const port = parentPort!;
const job = workerData as ThreadJob;

function send(m: ThreadMessage): void {
  try {
    port.postMessage(m);
  } catch {
    // a log field that cannot cross threads (a function): the line goes without its fields
    if (m.kind === 'log') port.postMessage({ ...m, fields: undefined });
    else throw new Error(`a projection thread could not send its ${m.kind}`);
  }
}

function threadLogger(fields: Record<string, unknown> = {}): Logger {
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (msg: string, more?: Record<string, unknown>): void =>
      send({ kind: 'log', level, msg, fields: { ...fields, ...more } });
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => threadLogger({ ...fields, ...more }),
  };
}

async function main(): Promise<ThreadMessage> {
  const controller = new AbortController();
  port.on('message', (m) => {
    if (m === 'abort') controller.abort(new Error('the run was stopped'));
  });
  const sql = connect(job.source.databaseUrl, { max: 10 });
  const store = await openEventStore({ eventStoreUrl: job.source.eventStoreUrl }, sql);
  try {
    const deps: RunnerDeps = {
      sql,
      store,
      log: threadLogger({ thread: threadId }),
      timezone: job.timezone,
      graceHours: job.graceHours,
      ...(job.bank ? { bank: job.bank } : {}),
    };
    const list = await selectProjections(deps, job.names);
    const run = {
      ...(job.batchSize ? { batchSize: job.batchSize } : {}),
      ...(job.until ? { until: job.until } : {}),
      signal: controller.signal,
      onProgress: (progress: ProjectionProgress) => send({ kind: 'progress', progress }),
    };
    return { kind: 'done', reports: await runAll(deps, list, run, job.fresh) };
  } catch (e) {
    return { kind: 'failed', error: threadErrorOf(e) };
  } finally {
    await store.close();
    await sql.end({ timeout: 5 });
  }
}

// the result goes last, once the thread's connections are closed: the caller then ends the thread
send(await main());

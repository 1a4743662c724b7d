import type { Config } from '../config/env';
import { Interrupted } from '../errors';
import type { Logger } from '../log';
import { readDirectory } from '../people/directory';
import { addUser } from '../people/manage';
import type { EventStore } from '../store/types';
import { demoBankConfig } from './demo-bank';
import { closeRuntime, openRuntime } from './runtime';
import { runWorker } from './worker';

/**
 * `recon demo --serve`: after the demo, the worker's HTTP side with the console on the demo's database and
 * statements, with a fresh administrator and analyst whose tokens are printed once (only their hashes are
 * kept). The first run adds them on an empty directory; later runs need RECON_TOKEN of an administrator to add
 * new ones. No scheduled jobs (the demo's sandbox PSP is gone); projections stay live. Until Ctrl-C.
 */

async function freshUsers(
  store: EventStore,
  token: string | undefined,
): Promise<Array<{ role: string; id: string; token: string }>> {
  const dir = await readDirectory(store);
  const n = dir.users.size === 0 ? '' : `-${dir.users.size + 1}`;
  const admin = await addUser(store, token, { id: `demo-admin${n}`, name: 'Demo Administrator', role: 'admin' });
  const analyst = await addUser(store, admin.token, { id: `demo-analyst${n}`, name: 'Demo Analyst', role: 'analyst' });
  return [
    { role: 'admin', id: admin.user.id, token: admin.token },
    { role: 'analyst', id: analyst.user.id, token: analyst.token },
  ];
}

export async function serveDemo(
  config: Config,
  log: Logger,
  opts: { port: number; host: string; outDir: string; actingToken: string | undefined },
): Promise<void> {
  const served: Config = { ...config, outDir: opts.outDir, bank: demoBankConfig() };
  const rt = await openRuntime(served, { log });
  const controller = new AbortController();
  const onSignal = () => controller.abort(new Interrupted('interrupted'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const users = await freshUsers(rt.store, opts.actingToken);
    for (const u of users) process.stdout.write(`console ${u.role} ${u.id} token: ${u.token}\n`);
    await runWorker(rt, controller.signal, { port: opts.port, host: opts.host, scheduler: false, projections: true });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await closeRuntime(rt);
  }
}

import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncRange } from '../../src/ingest/sync';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { createPspClient } from '../../src/psp/client';
import { recordText } from '../bad-input/records.cases';
import { useTestStore } from '../support/db';

/**
 * The register report's id is the PSP's answer to "start a report" (psp-interface.md 2.10), read as any text: an
 * id with a NUL in it was taken, the window completed, and the id went with the window's events into the store,
 * where the reconciliation read model could not apply them (`invalid byte sequence for encoding "UTF8": 0x00`,
 * the event set aside in quarantine, the payments it judges in doubt); an id of thousands of characters is one
 * PostgreSQL cannot index (`report_pending (pos_id, report_id)`). Now such an answer is a bad PSP answer naming
 * `report_id`: the window fails and is read again on the next run, and nothing of it is stored.
 */

const POS = '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f';
const t = useTestStore();
let server: Server;
let base = '';
let reportId = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (req.url?.includes('/streaming-report/start')) res.end(JSON.stringify({ report_id: reportId, count: 1 }));
      else if (req.url?.includes('/streaming-report/fetch/'))
        res.end(`[${recordText('register', { projectId: JSON.stringify(POS) })}]`);
      else res.end('[]');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

const project = () => ({
  name: 'doors',
  posId: POS,
  baseUrl: base,
  reportUrl: `${base}/report`,
  apiKey: 'k',
  apiSecret: 's',
  endpointsKey: 'e',
});

async function sync() {
  return syncRange(
    {
      store: t.store,
      projects: [project()],
      log: silentLogger,
      timezone: 'UTC',
      reportMaxWaitMs: 1000,
      clientFor: (p) => createPspClient(p, { timeoutMs: 2000, maxRetries: 0 }),
    },
    { from: '2024-05-01', to: '2024-05-02' },
  );
}

describe('a register report id PostgreSQL cannot store or index', () => {
  it.each([
    ['with a NUL', 'rep\u0000ort', /report_id: a NUL character/],
    ['of 6,000 characters', randomBytes(4500).toString('base64'), /report_id: .*6000/],
  ])('%s: the window fails naming report_id, and every read model applies what is stored', async (_n, id, why) => {
    reportId = id;
    const report = await sync();
    expect(report).toMatchObject({ completed: 0, failed: 1 });
    expect(JSON.stringify(report.windows[0])).toMatch(why);
    const runs = await runProjections({
      sql: t.db.sql,
      store: t.store,
      log: silentLogger,
      timezone: 'UTC',
      graceHours: 0,
    });
    for (const p of runs.projections) expect(p.status, p.name).toBe('live');
    const set = await t.db.sql<{ error: string }[]>`select error from recon.quarantined_events`;
    expect(set).toEqual([]);
  });

  it('a plain report id still syncs the window', async () => {
    reportId = 'rep-1';
    expect(await sync()).toMatchObject({ completed: 1, failed: 0 });
  });
});

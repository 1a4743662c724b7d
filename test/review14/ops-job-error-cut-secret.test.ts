import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log';
import { runsOf } from '../../src/scheduler/job-runs';
import { createScheduler } from '../../src/scheduler/scheduler';
import { useTestStore } from '../support/db';

/**
 * A job's error is kept to its first 2,000 characters, and that cut came before the secrets were hidden: a long
 * error (a driver's message with the query, a PSP page) quoting a secret across the 2,000th character kept the
 * secret's first characters, which no longer matched the secret, in job_runs and in the scheduler's log lines.
 * Now the whole text is scrubbed, then cut.
 */

const fx = useTestStore();
const password = 'Pg-Pass_7dQ2mZ9x';

describe('a failed job whose error quotes a secret across the cut', () => {
  it('keeps no piece of the secret', async () => {
    const lines: string[] = [];
    const s = createScheduler({
      sql: fx.db.sql,
      timezone: 'UTC',
      secrets: [password],
      log: createLogger({ secrets: [password], write: (l) => lines.push(l) }),
      jobs: [
        {
          name: 'r14-long-error',
          description: 'fails with a long message',
          cron: '0 3 * * *',
          run: async () => {
            throw new Error(`${'q'.repeat(1990)}${password} and more of the driver's text`);
          },
        },
      ],
    });
    const o = await s.runNow('r14-long-error');
    expect(o.status).toBe('failed');
    const [run] = await runsOf(fx.db.sql, 'r14-long-error');
    const piece = password.slice(0, 10);
    expect(run?.error?.startsWith('qqqq')).toBe(true);
    expect(run?.error).not.toContain(piece);
    expect(o.status === 'failed' ? o.error : '').not.toContain(piece);
    const failedLine = lines.find((l) => l.includes('job failed'));
    expect(failedLine).toBeDefined();
    expect(failedLine).not.toContain(piece);
  });
});

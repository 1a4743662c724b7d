import { afterAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon } from '../faults/support/processes';

/**
 * Review 5: `recon statements --month 1999-12` issued and recorded a statement run of 1999 (a month before any
 * data recon reads); `--month 0000-01` and `recon report nightly --date 0001-01-01` failed as INTERNAL (exit 70,
 * a PostgreSQL stack trace: "date/time field value out of range"). Every day and month option now goes through
 * the shared rule of days at a door (src/input-rules.ts, 2000-01-01 to ten years ahead): a usage error naming
 * the option, before the database starts.
 */

afterAll(async () => {
  await killAll();
});

// never reached: the options are refused before the database is opened
const env = reconEnv({ databaseUrl: 'postgres://recon:x@127.0.0.1:1/none' });

describe('review5: implausible days and months on the command line', () => {
  it('are usage errors naming the option (the real binary)', { timeout: 120_000 }, async () => {
    const cases: [string[], RegExp][] = [
      [['statements', '--month', '1999-12', '--out', '/tmp'], /--month: 1999-12 is outside the months recon reads/],
      [['statements', '--month', '0000-01', '--out', '/tmp'], /--month: 0000-01 is outside/],
      [['report', 'nightly', '--date', '0001-01-01'], /--date: date 0001-01-01 is before 2000-01-01/],
      [['bank', 'entries', '--from', '1900-01-01'], /--from: date 1900-01-01 is before 2000-01-01/],
    ];
    for (const [args, message] of cases) {
      const r = await runRecon(args, env);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain('INTERNAL');
    }
  });
});

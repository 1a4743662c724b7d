import { describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { runRecon } from '../faults/support/processes';

/** `recon quarantine` refuses what it cannot act on before it opens anything (exit 2, naming the option). */

// nothing listens there: a refusal must come before the database is opened
const env = reconEnv({ databaseUrl: 'postgres://recon:x@127.0.0.1:9/recon' });

describe('recon quarantine: usage', () => {
  it('an unknown projection, an event id that is not one, an unknown format', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['quarantine', 'list', '--projection', 'nope'], /--projection: unknown projection nope \(known: audit, bank, /],
      [['quarantine', 'retry', '--event', 'not-an-id'], /--event: expected an event id \(a UUID\), got "not-an-id"/],
      [['quarantine', 'list', '--format', 'csv'], /--format must be table or json \(got csv\)/],
    ];
    for (const [args, message] of cases) {
      const r = await runRecon(args, env, 60_000);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
    }
  });
});

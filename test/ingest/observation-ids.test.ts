import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { periodObserved, recordRejected, registerObserved, type SyncObservation } from '../../src/ingest/observations';
import { parsePeriodRecord, parseRegisterRecord } from '../../src/psp/parse';
import { REGISTER_FIELDS } from '../../src/psp/schemas';
import { periodRecord, registerRows, type RegisterField } from '../../src/sandbox/render';
import { generateScenario } from '../../src/sandbox/scenario';

/**
 * The projections and every idempotent re-run depend on the observations' ids and stored data text:
 * speeding up how they are computed must not change a byte of them. The digests below were taken from
 * the code before any such change, over a sandbox month (register and period records, one rejection).
 */

const window = { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' };
const register: SyncObservation = {
  source: 'register',
  reportId: 'rep-1',
  window,
  observedAt: '2025-02-02T00:00:00.000Z',
};
const period: SyncObservation = { ...register, source: 'period', reportId: null };

function observationsDigest(): { count: number; ids: string; data: string } {
  const scenario = generateScenario({ seed: 'observation-ids', month: '2025-01', timezone: 'UTC', payments: 400 });
  const posId = scenario.posIds[0]!;
  const ids = createHash('sha256');
  const data = createHash('sha256');
  let count = 0;
  const add = (k: { stream: string; event: { id: string; canonicalData?: string } }) => {
    ids.update(`${k.stream} ${k.event.id}\n`);
    data.update(`${k.event.canonicalData}\n`);
    count++;
  };
  for (const op of scenario.operations()) {
    for (const text of registerRows(op, {
      fields: [...REGISTER_FIELDS] as RegisterField[],
      projectName: 'p',
      entityName: 'e',
      lateStatusChange: false,
    })) {
      const r = parseRegisterRecord(text);
      add(
        r.ok
          ? registerObserved(posId, text, r.value, register)
          : recordRejected(posId, 'register', r.field, r.reason, text, { ...register }),
      );
    }
    const text = periodRecord(op);
    if (text === null) continue;
    const r = parsePeriodRecord(text);
    add(
      r.ok
        ? periodObserved(posId, text, r.value, period)
        : recordRejected(posId, 'period', r.field, r.reason, text, { ...period }),
    );
  }
  const bad =
    '{"paymentId":"p-1","amount":"1.005","currency":"UAH","method":"purchase","status":"success","dateTime":1735700000000}';
  const r = parseRegisterRecord(bad);
  expect(r.ok).toBe(false);
  if (!r.ok) add(recordRejected(posId, 'register', r.field, r.reason, bad, { ...register }));
  return { count, ids: ids.digest('hex'), data: data.digest('hex') };
}

describe('observation ids and data text', () => {
  it('are exactly those of the original builders for a sandbox month', () => {
    expect(observationsDigest()).toEqual(GOLDEN);
  });
});

// Taken first from the code before the builders were sped up (2026-11-21), over the month drawn then. Taken again
// over the month drawn since the sandbox's orders use a 128-bit generator (2026-11-29): the builders were unchanged
// (their files identical to those that gave the first digests, which held until then); only the month changed.
const GOLDEN = {
  count: 1938,
  ids: 'd0388b5cedabd251384998001bc2b05fffd7e6d238b6393b1164e59ca234ecf9',
  data: 'e59ab42e87dfd2639de80dee744c73824ba9d03d86de302a5a41c95db1591f5a',
};

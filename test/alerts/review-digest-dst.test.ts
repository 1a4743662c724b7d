import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { digestCandidates } from '../../src/alerts/rules';
import type { AlertRule } from '../../src/config/alerts';

/**
 * The digest once per local day across both DST changes of RECON_TIMEZONE, and never before its hour: every
 * quarter hour of the days around each change, the ids it would raise, grouped by local day.
 */

const rules = (atHour: number): AlertRule[] => [{ name: 'morning', on: 'digest', atHour, channels: ['team'] }];

function digestsBetween(fromIso: string, toIso: string, atHour: number, zone: string) {
  const ids = new Map<string, Set<string>>();
  const first = new Map<string, DateTime>();
  for (let t = Date.parse(fromIso); t < Date.parse(toIso); t += 15 * 60_000) {
    for (const c of digestCandidates(rules(atHour), [], new Date(t), zone)) {
      const local = DateTime.fromMillis(t, { zone });
      const day = local.toISODate()!;
      if (!ids.has(day)) {
        ids.set(day, new Set());
        first.set(day, local);
      }
      ids.get(day)!.add(c.alertId);
      expect(c.subject).toBe(day);
    }
  }
  return { ids, first };
}

describe('the digest across DST changes', () => {
  it('spring forward in Kyiv (03:00 does not exist on 2026-03-29): one per day, the first from 04:00 that day', () => {
    const { ids, first } = digestsBetween('2026-03-27T22:00:00Z', '2026-03-31T21:00:00Z', 3, 'Europe/Kyiv');
    expect([...ids.keys()]).toEqual(['2026-03-28', '2026-03-29', '2026-03-30', '2026-03-31']);
    for (const set of ids.values()) expect(set.size).toBe(1);
    expect(first.get('2026-03-29')!.toFormat('HH:mm')).toBe('04:00');
    expect(first.get('2026-03-28')!.toFormat('HH:mm')).toBe('03:00');
  });

  it('fall back in Kyiv (03:00–04:00 twice on 2026-10-25): one per day, not a second in the repeated hour', () => {
    const { ids, first } = digestsBetween('2026-10-23T21:00:00Z', '2026-10-26T22:00:00Z', 3, 'Europe/Kyiv');
    expect([...ids.keys()]).toEqual(['2026-10-24', '2026-10-25', '2026-10-26']);
    for (const set of ids.values()) expect(set.size).toBe(1);
    expect(first.get('2026-10-25')!.toFormat('HH:mm ZZ')).toBe('03:00 +03:00');
  });
});

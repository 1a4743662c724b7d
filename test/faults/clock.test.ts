import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../src/db/connect';
import { windows } from '../../src/psp/windows';
import { nextRun, parseCron } from '../../src/scheduler/cron';
import { runProjections } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import { startSandbox, type Sandbox } from '../../src/sandbox/server';
import { createPostgresEventStore } from '../../src/store/postgres';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { reconEnv } from '../../fixtures/psp-env';
import { killAll, runRecon } from './support/processes';
import { importDirectory } from './support/scenario';
import { addDays, expectedWindows, localMidnight, localMonth, offsetAt, wallClock, ZONE_RULES } from './support/zones';

/**
 * Days, months and sync windows across daylight-saving changes and month ends, checked against plain UTC
 * arithmetic with the zones' published offsets (test/faults/support/zones.ts): `windows()` for many
 * ranges, the windows `recon sync` recorded, and the lines of the statements `recon statements` wrote
 * for scenarios generated across the change — with the processes' own TZ set to a third zone, so that
 * nothing depends on the host's time zone.
 */
const HOST_TZ = 'Asia/Kathmandu'; // +05:45, no DST: any leak of the host zone shows

const toDates = (ws: ReturnType<typeof expectedWindows>) =>
  ws.map((w) => ({ fromDay: w.fromDay, toDay: w.toDay, from: new Date(w.from), to: new Date(w.to) }));

describe('sync windows across DST changes and month ends', () => {
  it('match the hand-known boundaries', () => {
    // Kyiv, autumn: 2025-10-26 has 25 hours, so 31 local days from 1 October are 745 h: one day shorter.
    expect(
      expectedWindows('Europe/Kyiv', '2025-10-01', '2025-12-01').map((w) => [
        w.fromDay,
        w.toDay,
        new Date(w.from).toISOString(),
        new Date(w.to).toISOString(),
      ]),
    ).toEqual([
      ['2025-10-01', '2025-10-31', '2025-09-30T21:00:00.000Z', '2025-10-30T22:00:00.000Z'],
      ['2025-10-31', '2025-12-01', '2025-10-30T22:00:00.000Z', '2025-11-30T22:00:00.000Z'],
    ]);
    // New York, spring: 2025-03-09 has 23 hours; February ends inside the first window.
    expect(
      expectedWindows('America/New_York', '2025-02-01', '2025-04-01').map((w) => [
        w.fromDay,
        w.toDay,
        new Date(w.from).toISOString(),
        new Date(w.to).toISOString(),
      ]),
    ).toEqual([
      ['2025-02-01', '2025-03-04', '2025-02-01T05:00:00.000Z', '2025-03-04T05:00:00.000Z'],
      ['2025-03-04', '2025-04-01', '2025-03-04T05:00:00.000Z', '2025-04-01T04:00:00.000Z'],
    ]);
    for (const [zone, from, to] of [
      ['Europe/Kyiv', '2025-10-01', '2025-12-01'],
      ['America/New_York', '2025-02-01', '2025-04-01'],
    ] as const) {
      expect(windows(from, to, zone)).toEqual(toDates(expectedWindows(zone, from, to)));
    }
  });

  it('equal the UTC arithmetic for ranges starting on every day before a DST change of 2024–2025 (and weekly otherwise)', () => {
    for (const zone of ['Europe/Kyiv', 'America/New_York', 'UTC']) {
      const changes = ZONE_RULES[zone]!.summerTime.flat().map((t) => Date.parse(t));
      // every start day from 70 days before a change to 2 days after it (ranges up to 65 days reach over it)
      const near = (day: string) =>
        changes.some((c) => Date.parse(day) > c - 70 * 86_400_000 && Date.parse(day) < c + 2 * 86_400_000);
      for (let day = '2024-01-02'; day < '2025-10-25'; day = addDays(day, near(day) ? 1 : 7)) {
        for (const length of [1, 31, 32, 65]) {
          const to = addDays(day, length);
          expect(windows(day, to, zone), `${zone} ${day}..${to}`).toEqual(toDates(expectedWindows(zone, day, to)));
        }
      }
    }
  });
});

/** The instant a wall time runs at by the scheduler's documented rules, from the written-down offsets. */
function expectedRunInstant(zone: string, wall: number): number {
  const { standard, summer } = ZONE_RULES[zone]!;
  const readBack = [standard, summer]
    .map((off) => wall - off * 60_000)
    .filter((t) => wallClock(zone, t) === new Date(wall).toISOString().slice(0, 19));
  // twice (fall back): the first occurrence; never (spring forward): read with the offset before the gap
  return readBack.length > 0 ? Math.min(...readBack) : wall - offsetAt(zone, wall - 12 * 3_600_000) * 60_000;
}

describe('scheduled run times across DST changes', () => {
  it.each([
    ['Europe/Kyiv', '0 30 3 * * *', '2025-03-27', '2025-04-02'],
    ['Europe/Kyiv', '0 30 3 * * *', '2025-10-23', '2025-10-29'],
    ['Europe/Kyiv', '0 */20 * * * *', '2025-10-25', '2025-10-27'],
    ['Europe/Kyiv', '0 */20 * * * *', '2025-03-29', '2025-03-31'],
    ['America/New_York', '30 2 * * *', '2025-03-06', '2025-03-12'],
    ['America/New_York', '*/15 1-2 * * *', '2025-11-01', '2025-11-04'],
  ])('%s %s from %s to %s: the instants the UTC arithmetic gives, each once', (zone, expression, from, to) => {
    const parsed = parseCron(expression, zone);
    if (!parsed.ok) throw new Error(parsed.reason);
    const s = parsed.schedule;
    const walls: number[] = [];
    for (let day = from; day < to; day = addDays(day, 1)) {
      for (const h of s.hours)
        for (const m of s.minutes)
          for (const sec of s.seconds)
            walls.push(Date.parse(`${day}T00:00:00Z`) + h * 3_600_000 + m * 60_000 + sec * 1000);
    }
    const start = localMidnight(zone, from);
    const end = localMidnight(zone, to);
    const expected = [...new Set(walls.map((w) => expectedRunInstant(zone, w)))]
      .filter((t) => t >= start && t < end)
      .sort((a, b) => a - b);
    const got: number[] = [];
    for (let t = nextRun(s, new Date(start - 1)); t.getTime() < end; t = nextRun(s, t)) got.push(t.getTime());
    expect(got.map((t) => new Date(t).toISOString())).toEqual(expected.map((t) => new Date(t).toISOString()));
  });
});

interface Line {
  payment: string;
  method: string;
  wall: string;
  share: number;
}

/** The lines of every Operations sheet of every statement in a directory (not the Payouts index). */
async function statementLinesIn(dir: string): Promise<Line[]> {
  const out: Line[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.xlsx') && !n.startsWith('payouts-'))) {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(dir, name));
    wb.eachSheet((ws) => {
      if (!ws.name.startsWith('Operations')) return;
      ws.eachRow((row, n) => {
        const at = row.getCell(1).value;
        if (n === 1 || !(at instanceof Date)) return; // header, blank and total rows
        // Excel date-times carry no zone: the cell holds the wall-clock time in the business zone.
        out.push({
          payment: String(row.getCell(3).value),
          method: String(row.getCell(4).value),
          wall: at.toISOString().slice(0, 19),
          share: Math.round(Number(row.getCell(7).value) * 100),
        });
      });
    });
  }
  return out;
}

const MOVES_MONEY = ['purchase', 'capture', 'recurrent', 'refund', 'dispute'];
const minor = (v: unknown) => Math.round(Number(v) * 100);

/** What the statements must list, read from the PSP's register rows exactly as received (the `raw` text). */
async function expectedLines(sql: Sql, zone: string): Promise<Array<Line & { at: number }>> {
  const rows = await sql<
    { raw: string }[]
  >`select data->>'raw' as raw from es_events where type = 'RegisterRecordObserved'`;
  const seen = new Map<string, Line & { at: number }>();
  for (const { raw } of rows) {
    const r = JSON.parse(raw) as Record<string, unknown>;
    if (r.status !== 'success' || typeof r.receiverName !== 'string' || !MOVES_MONEY.includes(String(r.method)))
      continue;
    const at = Number(r.dateTime);
    const share = minor(r.receiverAmount) + minor(r.receiverFee);
    const line = {
      payment: String(r.paymentId),
      method: String(r.method),
      wall: wallClock(zone, at),
      share: r.method === 'refund' || r.method === 'dispute' ? -share : share,
      at,
    };
    // one journal row per (payment, method, receiver, time, amount): a row listed twice is one line
    seen.set(JSON.stringify([r.paymentId, r.method, r.receiverName, r.dateTime, r.originalAmount]), line);
  }
  return [...seen.values()];
}

const key = (l: Line) => `${l.payment} ${l.method} ${l.wall} ${l.share}`;

interface Case {
  readonly zone: string;
  readonly seed: string;
  /** scenario range, local days */
  readonly from: string;
  readonly to: string;
  /** sync range (wider: the windows cross the change) */
  readonly syncFrom: string;
  readonly syncTo: string;
  readonly months: readonly [string, string];
  /** the day of the offset change inside the scenario */
  readonly changeDay: string;
}

const CASES: readonly Case[] = [
  // Kyiv falls back on 26 October 2025 (04:00 → 03:00), then October ends.
  {
    zone: 'Europe/Kyiv',
    seed: 'faults-clock-kyiv',
    from: '2025-10-22',
    to: '2025-11-04',
    syncFrom: '2025-10-01',
    syncTo: '2025-11-05',
    months: ['2025-10', '2025-11'],
    changeDay: '2025-10-26',
  },
  // February ends in New York, then clocks spring forward on 9 March 2025 (02:00 → 03:00).
  {
    zone: 'America/New_York',
    seed: 'faults-clock-ny',
    from: '2025-02-24',
    to: '2025-03-12',
    syncFrom: '2025-02-01',
    syncTo: '2025-04-01',
    months: ['2025-02', '2025-03'],
    changeDay: '2025-03-09',
  },
];

describe.each(CASES)('a month end and a DST change in $zone', (c) => {
  let sandbox: Sandbox;
  let db: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    sandbox = await startSandbox({
      scenario: { seed: c.seed, from: c.from, to: c.to, timezone: c.zone, payments: 600 },
      faults: { reportNotReadyPolls: 0 },
    });
    db = await createTestDatabase();
    dir = mkdtempSync(path.join(tmpdir(), 'recon-faults-clock-'));
    await importDirectory(db.sql, sandbox);
  });

  afterAll(async () => {
    await killAll();
    await sandbox?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('recon sync reads the windows the UTC arithmetic gives', async () => {
    const env = reconEnv({
      databaseUrl: db.url,
      project: sandbox.projects[0],
      timezone: c.zone,
      extra: { TZ: HOST_TZ },
    });
    const r = await runRecon(['sync', '--from', c.syncFrom, '--to', c.syncTo], env);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const recorded = await db.sql<{ from: string; to: string }[]>`
      select data->'window'->>'from' as from, data->'window'->>'to' as to from es_events where type = 'SyncWindowCompleted' order by 1`;
    const expected = expectedWindows(c.zone, c.syncFrom, c.syncTo);
    expect(expected.length).toBe(2);
    expect(recorded.map((w) => [Date.parse(w.from), Date.parse(w.to)])).toEqual(expected.map((w) => [w.from, w.to]));
  });

  it('recon statements put each operation in the month and at the wall-clock time the UTC arithmetic gives', async () => {
    await runProjections(
      { sql: db.sql, store: createPostgresEventStore(db.sql), log: silentLogger, timezone: c.zone, graceHours: 48 },
      { names: ['journal'] },
    );
    const env = reconEnv({ databaseUrl: db.url, timezone: c.zone, extra: { TZ: HOST_TZ } });
    const expected = await expectedLines(db.sql, c.zone);
    for (const month of c.months) {
      const out = path.join(dir, month);
      // the journal is the read model the statements' lines come from, projected above: no catch-up of the others
      const r = await runRecon(['statements', '--month', month, '--out', out, '--no-catch-up'], env);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      const lines = await statementLinesIn(out);
      const want = expected.filter((l) => localMonth(c.zone, l.at) === month);
      expect(want.length).toBeGreaterThan(100);
      expect(lines.map(key).sort()).toEqual(want.map(key).sort());
    }

    // The scenario really tests the edges: operations whose UTC month differs from their local month, and
    // operations on the day of the change on both sides of it.
    const utcMonth = (ms: number) => new Date(ms).toISOString().slice(0, 7);
    expect(expected.filter((l) => utcMonth(l.at) !== localMonth(c.zone, l.at)).length).toBeGreaterThan(0);
    const changeDay = expected.filter((l) => l.wall.startsWith(c.changeDay));
    expect(new Set(changeDay.map((l) => offsetAt(c.zone, l.at))).size).toBe(2);
    const dayStart = localMidnight(c.zone, c.changeDay);
    expect(localMidnight(c.zone, addDays(c.changeDay, 1)) - dayStart).not.toBe(24 * 3_600_000);
  }, 240_000); // a real `recon statements` process: over a minute on a loaded machine
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createProgressReporter } from '../../src/ingest/progress';
import type { SyncProgress } from '../../src/ingest/sync';
import { createLogger } from '../../src/log';

// Issue 4: a sync shows its progress (records, rate, windows done) on a terminal, and as structured logs otherwise.

const WINDOW = { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' };
const at = (records: number, phase: SyncProgress['phase'] = 'register', windowsDone = 0): SyncProgress => ({
  posId: 'pos-1',
  window: WINDOW,
  phase,
  windowsDone,
  windowsTotal: 3,
  records,
  recordsPerSecond: 12_500,
});

function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; written: string[] } {
  const written: string[] = [];
  const stream = {
    isTTY,
    write: (s: string) => {
      written.push(s);
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

function capturingLog(): { log: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return {
    log: createLogger({ level: 'info', write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) }),
    lines,
  };
}

describe('sync progress', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2025-02-01T10:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('on a terminal: one status line rewritten in place with windows, records and rate, ended by a newline', () => {
    const { stream, written } = fakeStream(true);
    const { log, lines } = capturingLog();
    const progress = createProgressReporter({ log, stream, everyMs: 200 });
    progress.update(at(1_000));
    progress.update(at(2_000)); // within 200 ms of the last line: not drawn
    vi.advanceTimersByTime(250);
    progress.update(at(123_456, 'period', 1));
    progress.update(at(130_000, 'completed', 2)); // a window's end is always drawn
    progress.end();

    expect(written).toHaveLength(4);
    expect(written.slice(0, 3).every((w) => w.startsWith('\r\x1b[2K'))).toBe(true);
    expect(written[0]).toContain('sync 0/3 windows · 1,000 records · 12,500/s · register 2025-01-01..2025-02-01');
    expect(written[1]).toContain('sync 1/3 windows · 123,456 records · 12,500/s · period');
    expect(written[2]).toContain('sync 2/3 windows · 130,000 records');
    expect(written[3]).toBe('\n');
    expect(lines).toEqual([]); // nothing in the structured log meanwhile
  });

  it('elsewhere: structured log lines with the same figures, at most one per interval, nothing on the stream', () => {
    const { stream, written } = fakeStream(false);
    const { log, lines } = capturingLog();
    const progress = createProgressReporter({ log, stream, everyMs: 5_000 });
    progress.update(at(1_000));
    vi.advanceTimersByTime(1_000);
    progress.update(at(9_000)); // throttled
    vi.advanceTimersByTime(5_000);
    progress.update(at(70_000, 'period', 1));
    progress.update(at(80_000, 'completed', 1)); // the window's own log line ("window synced") says it
    progress.end();

    expect(written).toEqual([]);
    expect(
      lines.map((l) => [
        l['msg'],
        l['records'],
        l['windowsDone'],
        l['windowsTotal'],
        l['recordsPerSecond'],
        l['phase'],
      ]),
    ).toEqual([
      ['sync progress', 1_000, 0, 3, 12_500, 'register'],
      ['sync progress', 70_000, 1, 3, 12_500, 'period'],
    ]);
  });
});

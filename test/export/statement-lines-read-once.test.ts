import { describe, expect, it } from 'vitest';
import { linesReadOnce } from '../../src/export/statements/lines-read-once';

/**
 * A statement's workbook and PDF take each currency's lines from one read (lines-read-once.ts): both get every
 * line in order from a single read, neither more than the bound ahead of the other, the read's error after the
 * lines before it; a writer that is done does not hold the other back, a second read is a read of its own, and
 * the read is closed when neither reads it any more.
 */

function source(n: number, o: { failAt?: number } = {}) {
  const seen = { reads: 0, read: 0, closed: 0 };
  const read = (currency: string) => {
    seen.reads++;
    return (async function* () {
      try {
        for (let i = 0; i < n; i++) {
          if (i % 100 === 0) await new Promise((r) => setImmediate(r));
          if (i === o.failAt) throw new Error(`cursor lost at ${i}`);
          seen.read++;
          yield `${currency}-${i}`;
        }
      } finally {
        seen.closed++;
      }
    })();
  };
  return { seen, read };
}

const all = (currency: string, n: number) => Array.from({ length: n }, (_, i) => `${currency}-${i}`);

describe('one read of the lines for the workbook and the PDF', () => {
  it('gives both writers every line in order from one read, neither far ahead of the other', async () => {
    const s = source(3_000);
    const [a, b] = linesReadOnce(s.read, 200);
    const got: [string[], string[]] = [[], []];
    let mostApart = 0;
    const write = async (k: 0 | 1, every: number) => {
      for await (const l of (k ? b : a).lines('EUR')) {
        got[k].push(l);
        mostApart = Math.max(mostApart, Math.abs(got[0].length - got[1].length));
        if (got[k].length % every === 0) await new Promise((r) => setImmediate(r));
      }
    };
    await Promise.all([write(0, 7), write(1, 300)]);
    expect(got[0]).toEqual(all('EUR', 3_000));
    expect(got[1]).toEqual(all('EUR', 3_000));
    expect(s.seen.reads).toBe(1);
    expect(mostApart).toBeGreaterThan(0);
    expect(mostApart).toBeLessThanOrEqual(201);
    // a writer's second read of a currency (the Audit sheet) is a read of its own
    const again: string[] = [];
    for await (const l of a.lines('EUR')) again.push(l);
    expect(again).toEqual(all('EUR', 3_000));
    expect(s.seen.reads).toBe(2);
  });

  it("gives both the read's error after the lines before it", async () => {
    const s = source(1_000, { failAt: 420 });
    const [a, b] = linesReadOnce(s.read, 100);
    const results = await Promise.allSettled(
      [a, b].map(async (r) => {
        const got: string[] = [];
        try {
          for await (const l of r.lines('UAH')) got.push(l);
        } catch (e) {
          expect(got).toEqual(all('UAH', 420));
          throw e;
        }
      }),
    );
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(s.seen.reads).toBe(1);
  });

  it('lets the other writer read on alone once one is done, and closes the read when neither reads it', async () => {
    const s = source(5_000);
    const [a, b] = linesReadOnce(s.read, 100);
    // the workbook fails at its 150th line while the PDF, slower, is at its table too
    const got: string[] = [];
    const [workbook] = await Promise.allSettled([
      (async () => {
        for await (const l of a.lines('EUR')) if (l === 'EUR-150') throw new Error('bridge does not tie');
      })(),
      (async () => {
        for await (const l of b.lines('EUR')) {
          got.push(l);
          if (got.length % 10 === 0) await new Promise((r) => setImmediate(r));
          if (got.length === 2_000) break;
        }
      })(),
    ]);
    expect(workbook.status).toBe('rejected');
    expect(got).toEqual(all('EUR', 2_000));
    // neither reads it any more: the read was closed, not read to its end
    expect(s.seen.closed).toBe(1);
    expect(s.seen.read).toBeLessThan(2_200);
    expect(s.seen.reads).toBe(1);
    // a reader closed before it asks for a currency does not hold the other back there either
    await b.close();
    const alone: string[] = [];
    for await (const l of a.lines('USD')) alone.push(l);
    expect(alone).toEqual(all('USD', 5_000));
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCsvRecords } from '../../src/ingest/csv-records';
import { oldParseCsvRecords } from './csv-records-oracle';

/**
 * The directory and the fee contract read their CSV with csv-parse (issue 24): on any text made of the
 * characters CSV cares about, the records, the line each starts on and the line a refusal names are those
 * of the hand-written reader it replaces (cells compared trimmed: every reader trims them).
 */

const seen = (r: ReturnType<typeof parseCsvRecords>) =>
  r.ok ? { ok: true, records: r.records.map((x) => ({ line: x.line, fields: x.fields.map((f) => f.trim()) })) } : r;
const oracle = (text: string) => {
  const r = oldParseCsvRecords(text);
  return r.ok ? seen(r) : { ok: false, line: r.line };
};
const lineOf = (r: ReturnType<typeof parseCsvRecords>) => (r.ok ? seen(r) : { ok: false, line: r.line });

const piece = fc.constantFrom('a', 'Я', ' ', '\t', '\f', ',', '"', '""', '\n', '\r', '\r\n');

describe('CSV records by csv-parse', () => {
  it('reads as the hand-written reader did: records, lines, refusals and their lines', () => {
    let refused = 0;
    fc.assert(
      fc.property(fc.boolean(), fc.array(piece, { maxLength: 30 }), (bom, pieces) => {
        const text = `${bom ? '\uFEFF' : ''}${pieces.join('')}`;
        const r = parseCsvRecords(text);
        if (!r.ok) refused++;
        expect(lineOf(r)).toEqual(oracle(text));
      }),
      { numRuns: 1000, seed: 24 },
    );
    // the property met both sides
    expect(refused).toBeGreaterThan(50);
    expect(refused).toBeLessThan(950);
  });

  it('names the line a quoting fault is on, and where an unclosed quote starts', () => {
    expect(parseCsvRecords('h\nx,"a\r\nb"c\n')).toEqual({
      ok: false,
      line: 3,
      message: 'unexpected character after a closing quote (a quote inside a quoted field is written "")',
    });
    expect(parseCsvRecords('h\n\nx,y"z"\n')).toMatchObject({ ok: false, line: 3 });
    expect(parseCsvRecords('h\n"a\r\nb"\nx,"open\n\nstill')).toEqual({
      ok: false,
      line: 4,
      message: 'a quoted field is not closed before the end of the file',
    });
  });

  it('skips an empty line but keeps a line of blanks (its field count is refused)', () => {
    expect(parseCsvRecords('a,b\n\n  \n"",1\n')).toEqual({
      ok: true,
      records: [
        { line: 1, fields: ['a', 'b'] },
        { line: 3, fields: [''] },
        { line: 4, fields: ['', '1'] },
      ],
    });
  });
});

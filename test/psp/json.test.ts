import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLosslessNumber, jsonArrayItems, parseJsonExact, toPlainJson } from '../../src/psp/json';

const enc = new TextEncoder();

async function collect(chunks: Uint8Array[]): Promise<string[]> {
  async function* gen() {
    for (const c of chunks) yield c;
  }
  const out: string[] = [];
  for await (const item of jsonArrayItems(gen())) out.push(item);
  return out;
}

function splitAt(bytes: Uint8Array, points: number[]): Uint8Array[] {
  const cuts = [...new Set(points)].filter((p) => p > 0 && p < bytes.length).sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const c of [...cuts, bytes.length]) {
    out.push(bytes.slice(prev, c));
    prev = c;
  }
  return out;
}

// Elements as they appear in the text: escapes, brackets inside strings, multi-byte UTF-8 (2, 3 and 4 bytes).
const ITEMS = [
  '{"paymentId":"a1","amount":12.50,"receiverName":"ТОВ \\"Київ\\" [ok]","x":null}',
  '{"paymentId":"a2","amount":"0.10","payload":"}{][,\\\\","nested":{"list":[1,[2,{"k":"€"}]]}}',
  '{"paymentId":"a3","description":"😀 emoji, é","dateTime":1717000000000}',
  '[1,2]',
  '"text, with ] inside"',
  '-12.5e3',
  'true',
  'null',
];

describe('jsonArrayItems', () => {
  it('yields every element of a bare array exactly, whatever the split point', async () => {
    const doc = ' [\n  ' + ITEMS.join(' ,\n ') + '\n] \n';
    const bytes = enc.encode(doc);
    for (let i = 0; i <= bytes.length; i++) {
      expect(await collect(splitAt(bytes, [i]))).toEqual(ITEMS);
    }
  });

  it('reads the first array member of a top-level object, skipping the others', async () => {
    const doc =
      '{"count": 3, "meta": {"list": [9, 9], "s": "[x]"}, "records": [' +
      ITEMS.slice(0, 3).join(',') +
      '], "later": [1], "z": "]"}';
    const bytes = enc.encode(doc);
    for (let i = 0; i <= bytes.length; i++) {
      expect(await collect(splitAt(bytes, [i]))).toEqual(ITEMS.slice(0, 3));
    }
  });

  it('handles arbitrary chunkings (property)', async () => {
    const doc = '[' + ITEMS.join(',') + ']';
    const bytes = enc.encode(doc);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), async (points) => {
        expect(await collect(splitAt(bytes, points))).toEqual(ITEMS);
      }),
      { numRuns: 200 },
    );
  });

  it('yields nothing for an empty array, in either shape', async () => {
    expect(await collect([enc.encode('[]')])).toEqual([]);
    expect(await collect([enc.encode('{"records":[]}')])).toEqual([]);
    expect(await collect([enc.encode(' [ ] ')])).toEqual([]);
  });

  it('throws a clear error on truncated input at every cut', async () => {
    const doc = '[' + ITEMS.slice(0, 3).join(',') + ']';
    const bytes = enc.encode(doc);
    for (let i = 0; i < bytes.length; i++) {
      const cut = bytes.slice(0, i);
      await expect(collect([cut])).rejects.toThrow(/truncated|empty|UTF-8/);
    }
  });

  it('refuses other shapes and trailing garbage', async () => {
    await expect(collect([enc.encode('{"a":1}')])).rejects.toThrow(/no array member/);
    await expect(collect([enc.encode('"x"')])).rejects.toThrow(/expected an array or an object/);
    await expect(collect([enc.encode('[1] [2]')])).rejects.toThrow(/after the end/);
    await expect(collect([enc.encode('[1 2]')])).rejects.toThrow(/expected ',' or '\]'/);
    await expect(collect([enc.encode('')])).rejects.toThrow(/empty/);
    await expect(collect([new Uint8Array([0x5b, 0xff, 0x5d])])).rejects.toThrow(/UTF-8/);
  });

  it('refuses an element over the size limit without holding it', async () => {
    const big = '[{"a":"' + 'x'.repeat(2000) + '"}]';
    async function* gen() {
      yield enc.encode(big);
    }
    const it = jsonArrayItems(gen(), { maxItemChars: 1000 });
    await expect(it.next()).rejects.toThrow(/larger than 1000/);
  });

  it('streams a large array in bounded memory', async () => {
    const record =
      '{"paymentId":"00000000-0000-0000-0000-000000000000","amount":"100.00","currency":"UAH","method":"purchase","status":"success"}';
    const n = 200_000;
    async function* gen() {
      yield enc.encode('[');
      for (let i = 0; i < n; i += 1000)
        yield enc.encode(Array.from({ length: 1000 }, () => record).join(',') + (i + 1000 < n ? ',' : ''));
      yield enc.encode(']');
    }
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    let count = 0;
    let peak = before;
    for await (const item of jsonArrayItems(gen())) {
      if (item !== record) throw new Error('item changed');
      count++;
      if (count % 20_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    expect(count).toBe(n);
    // ~25 MB of records went through; the heap never held a large part of them.
    expect(peak - before).toBeLessThan(20 * 1024 * 1024);
  });
});

describe('parseJsonExact', () => {
  it('keeps the source text of numbers', () => {
    const r = parseJsonExact('{"a":12.50,"b":12345678901234567890,"c":0.1}');
    expect(r.ok).toBe(true);
    const v = (r as { value: Record<string, unknown> }).value;
    expect(isLosslessNumber(v.a) && v.a.value).toBe('12.50');
    expect(toPlainJson(v)).toEqual({ a: 12.5, b: '12345678901234567890', c: 0.1 });
  });
  it('refuses nesting deeper than 32 and invalid JSON', () => {
    expect(parseJsonExact('['.repeat(33) + ']'.repeat(33))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/deeper than 32/),
    });
    expect(parseJsonExact('['.repeat(32) + ']'.repeat(32)).ok).toBe(true);
    expect(parseJsonExact('['.repeat(100_000)).ok).toBe(false);
    expect(parseJsonExact('{"a":1,}').ok).toBe(false);
    expect(parseJsonExact('{"a":1,"a":2}').ok).toBe(false);
  });
});

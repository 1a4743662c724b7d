import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newEvent, defineEvent } from '../../src/events/catalog';
import { stableStringify } from '../../src/canonical';
import { contentHash, contentHashOfCanonical, prepareAppend } from '../../src/store/prepare';
import { z } from 'zod';

const Any = defineEvent('AnyJson', 1, z.unknown());

describe('event preparation: one canonical serialisation per event', () => {
  it('the hash assembled around the canonical data equals the hash of the canonical whole', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.string({ minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 9 }),
        (data, type, version) => {
          const canonical = stableStringify(data, true);
          expect(contentHashOfCanonical(type, version, canonical)).toBe(contentHash({ type, version, data }));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('newEvent hands its canonical text to the store, which stores and hashes exactly that', () => {
    const e = newEvent(Any, { b: 1, a: ['x', { d: null, c: true }] });
    expect(e.canonicalData).toBe('{"a":["x",{"c":true,"d":null}],"b":1}');
    const [p] = prepareAppend([{ stream: 's', events: [e] }]);
    expect(p!.dataJson).toBe(e.canonicalData);
    expect(p!.contentHash).toBe(contentHash(e));
    // without the canonical text the store computes the same
    const [q] = prepareAppend([
      { stream: 's', events: [{ id: e.id, type: e.type, version: e.version, data: e.data }] },
    ]);
    expect(q).toEqual(p);
  });

  it('refuses, before anything is written, what PostgreSQL cannot hold as given', () => {
    const id = '00000000-0000-5000-8000-000000000001';
    const prepare =
      (stream: string, e: Partial<{ type: string; version: number }> = {}) =>
      () =>
        prepareAppend([{ stream, events: [{ id, type: 'T', version: 1, data: {}, ...e }] }]);
    expect(prepare('s-\ud800')).toThrow(/invalid stream name "s-\\ud800": is not well-formed Unicode/);
    expect(prepare('s-\udfff-\ud800')).toThrow(/invalid stream name/);
    expect(prepare('s-\u0000')).toThrow(/invalid stream name .*contains NUL/);
    expect(prepare('s', { type: 'T\ud800x' })).toThrow(/: type .*not well-formed Unicode/);
    expect(prepare('s', { type: '\u0000' })).toThrow(/: type .*contains NUL/);
    expect(prepare('s', { version: 2_147_483_648 })).toThrow(/version 2147483648 is above 2147483647/);
    for (const f of [prepare('s-\ud800'), prepare('s', { type: 'T\u0000' }), prepare('s', { version: 2 ** 40 })]) {
      expect(f).toThrow(expect.objectContaining({ code: 'INVALID_EVENT' }));
    }
    // surrogate pairs are Unicode; the largest int4 is a version
    expect(prepare('s-\u{1F4B8}', { type: '\u{1D11E}', version: 2_147_483_647 })()).toHaveLength(1);
  });

  it('refuses data that is not plain JSON', () => {
    for (const data of [{ a: 1n }, { n: Number.NaN }, { f: () => 1 }, [Infinity]]) {
      expect(() =>
        prepareAppend([
          { stream: 's', events: [{ id: '00000000-0000-5000-8000-000000000001', type: 'T', version: 1, data }] },
        ]),
      ).toThrow(/not plain JSON/);
    }
  });
});

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RECON_NAMESPACE, reconUuidV5, sha256Hex, stableStringify, uuidV5 } from '../../src/canonical';

/**
 * Ids and content hashes are made by one-shot hashing of a reused buffer (src/canonical.ts). They must stay
 * exactly what the plain algorithm gives: a stored id that changed would make a re-import add every entry
 * again. Checked against the RFC's example and against the algorithm written out with a Hash object.
 */

/** UUID v5 with a Hash object, the name's parts given to it one after the other. */
function plainUuidV5(namespace: string, ...parts: string[]): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex'));
  for (const part of parts) hash.update(part, 'utf8');
  const h = hash.digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Names of every kind: empty, ASCII, Cyrillic, astral, a lone surrogate, NUL, longer than the buffer. */
function names(): string[] {
  const out = ['', 'a', 'Оплата за жовтень', '𝄞 music', 'lone \ud800 surrogate', 'nul\u0000inside', 'x'.repeat(5000)];
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
  for (let i = 0; i < 300; i++) {
    let s = '';
    const length = next() % 200;
    for (let j = 0; j < length; j++) s += String.fromCharCode(next() % 3 === 0 ? next() % 0x10000 : 32 + (next() % 95));
    out.push(s);
  }
  return out;
}

describe('canonical hashes', () => {
  it('gives the RFC 9562 example of a version 5 UUID (DNS namespace, www.example.com)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });

  it('gives the ids the algorithm written out gives, for names of every kind, whole or in parts', () => {
    for (const name of names()) {
      expect(uuidV5(name)).toBe(plainUuidV5(RECON_NAMESPACE, name));
      const cut = Math.floor(name.length / 3);
      const parts = [name.slice(0, cut), name.slice(cut)];
      expect(reconUuidV5(...parts)).toBe(plainUuidV5(RECON_NAMESPACE, ...parts));
    }
  });

  it('keeps a long name from leaking into the next, shorter one', () => {
    const long = 'y'.repeat(10_000);
    const huge = 'z'.repeat(200_000); // above what the reused buffer grows to
    expect(uuidV5(huge)).toBe(plainUuidV5(RECON_NAMESPACE, huge));
    expect(uuidV5(long)).toBe(plainUuidV5(RECON_NAMESPACE, long));
    expect(uuidV5('short')).toBe(plainUuidV5(RECON_NAMESPACE, 'short'));
  });

  it('refuses a namespace that is not a UUID, instead of hashing whatever bytes it decodes to', () => {
    for (const bad of ['', 'abcd', '{6ba7b810-9dad-11d1-80b4-00c04fd430c8}', '6ba7b810-9dad-11d1-80b4-00c04fd430c800'])
      expect(() => uuidV5('name', bad)).toThrow(/not a UUID namespace/);
    expect(uuidV5('www.example.com', '6BA7B810-9DAD-11D1-80B4-00C04FD430C8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });

  it('gives the sha-256 of the text in UTF-8', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    for (const name of names()) expect(sha256Hex(name)).toBe(createHash('sha256').update(name, 'utf8').digest('hex'));
  });
});

/** Canonical JSON written out plainly: keys sorted for every object, no remembered shapes. */
function plainStable(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(plainStable).join(',')}]`;
  const o = v as Record<string, unknown>;
  const members = Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${plainStable(o[k])}`);
  return `{${members.join(',')}}`;
}

describe('stableStringify with the key order of a shape remembered (issue 26)', () => {
  it('gives the plain sorted text for objects of one key count in many orders and shapes, one after the other', () => {
    let seed = 26;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    const pool = ['amount', 'b', 'a', 'zeta', 'Zeta', 'é', '10', '2', 'orderId', 'other', '', 'a\u0000'];
    for (let i = 0; i < 3000; i++) {
      // Shapes repeat (the same order twice running), change order, or change a key at the same count.
      const count = 1 + (next() % 6);
      const keys = new Set<string>();
      while (keys.size < count) keys.add(pool[next() % pool.length]!);
      const inner: Record<string, unknown> = {};
      for (const k of keys) inner[k] = next() % 5 === 0 ? undefined : next() % 100;
      const outer: Record<string, unknown> = {};
      for (const k of [...keys].reverse()) outer[k] = next() % 2 ? inner : [inner, { ...inner }];
      for (let j = 0; j < 1 + (next() % 3); j++) expect(stableStringify(outer)).toBe(plainStable(outer));
    }
  });
});

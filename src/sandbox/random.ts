/**
 * Seeded randomness for the sandbox. Everything the sandbox invents comes from here, so that one seed
 * always gives the same scenario, byte for byte. Never Math.random, never the clock.
 */

export interface Rng {
  /** uniform in [0, 1) */
  next(): number;
  /** uniform integer in [min, max] (both inclusive) */
  int(min: number, max: number): number;
  /** uniform bigint in [min, max] (both inclusive); only for spans below 2^32 */
  bigint(min: bigint, max: bigint): bigint;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** picks a key by weight; weights need not sum to one */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
  uuid(): string;
  hex(chars: number): string;
  digits(n: number): string;
}

/** 32-bit FNV-1a over the text of each part, then a final avalanche: seeds for sub-streams. */
export function hashSeed(...parts: Array<string | number>): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const text = `${part}\u0001`;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  }
  // murmur3 fmix32: neighbouring indexes must give unrelated streams
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32: small, fast, good enough for test data (not for anything secret). */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const u32 = (): number => Math.floor(next() * 4294967296) >>> 0;
  const hex = (chars: number): string => {
    let out = '';
    while (out.length < chars) out += u32().toString(16).padStart(8, '0');
    return out.slice(0, chars);
  };
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    bigint: (min, max) => min + BigInt(Math.floor(next() * Number(max - min + 1n))),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[Math.floor(next() * items.length)]!;
    },
    weighted: (weights) => {
      const keys = Object.keys(weights) as Array<keyof typeof weights>;
      const total = keys.reduce((s, k) => s + Math.max(0, weights[k]), 0);
      let x = next() * total;
      for (const k of keys) {
        x -= Math.max(0, weights[k]);
        if (x < 0) return k;
      }
      return keys[keys.length - 1]!;
    },
    uuid: () => {
      const a = u32();
      const b = u32();
      const c = u32();
      const d = u32();
      const h8 = (x: number) => x.toString(16).padStart(8, '0');
      const h4 = (x: number) => x.toString(16).padStart(4, '0');
      // version 4 and RFC 4122 variant bits
      return `${h8(a)}-${h4(b >>> 16)}-${h4(((b & 0x0fff) | 0x4000) >>> 0)}-${h4(((c >>> 16) & 0x3fff) | 0x8000)}-${h4(c & 0xffff)}${h8(d)}`;
    },
    hex,
    digits: (n) => {
      let out = '';
      while (out.length < n)
        out += Math.floor(next() * 1e9)
          .toString()
          .padStart(9, '0');
      return out.slice(0, n);
    },
  };
  return rng;
}

import { createHash } from 'node:crypto';

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

/**
 * The draws every generator shares, built on its `next()`. A base class, so that the million generators of a
 * large month (one per order) share their methods instead of each making its own.
 */
abstract class Draws implements Rng {
  abstract next(): number;

  private u32(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  bigint(min: bigint, max: bigint): bigint {
    return min + BigInt(Math.floor(this.next() * Number(max - min + 1n)));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const keys = Object.keys(weights) as K[];
    let total = 0;
    for (const k of keys) total += Math.max(0, weights[k]);
    let x = this.next() * total;
    for (const k of keys) {
      x -= Math.max(0, weights[k]);
      if (x < 0) return k;
    }
    return keys[keys.length - 1]!;
  }

  uuid(): string {
    const a = this.u32();
    const b = this.u32();
    const c = this.u32();
    const d = this.u32();
    // version 4 and RFC 4122 variant bits
    return `${hex8(a)}-${hex4(b >>> 16)}-${hex4(((b & 0x0fff) | 0x4000) >>> 0)}-${hex4(((c >>> 16) & 0x3fff) | 0x8000)}-${hex4(c & 0xffff)}${hex8(d)}`;
  }

  hex(chars: number): string {
    let out = '';
    while (out.length < chars) out += hex8(this.u32());
    return out.slice(0, chars);
  }

  digits(n: number): string {
    let out = '';
    while (out.length < n)
      out += Math.floor(this.next() * 1e9)
        .toString()
        .padStart(9, '0');
    return out.slice(0, n);
  }
}

/** mulberry32: 32 bits of state, small and fast, good enough for the scenario's few fixed streams. */
class Mulberry32 extends Draws {
  private state: number;

  constructor(seed: number) {
    super();
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/**
 * sfc32: 128 bits of state. A stream per order needs it: a million streams of a 32-bit generator lie on one
 * cycle of 2^32 states, so some overlap, and two orders drew the same payment id at 1M payments. Seeded
 * with 96 bits (`createStreamRng`), its streams neither start alike nor overlap in practice.
 */
class Sfc32 extends Draws {
  private a: number;
  private b: number;
  private c: number;
  private d = 1;

  constructor(a: number, b: number, c: number) {
    super();
    this.a = a >>> 0;
    this.b = b >>> 0;
    this.c = c >>> 0;
    // the author's warm-up: the first outputs of a fresh state are still close to its seed
    for (let i = 0; i < 12; i++) this.next();
  }

  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }
}

const hex8 = (x: number) => x.toString(16).padStart(8, '0');
const hex4 = (x: number) => x.toString(16).padStart(4, '0');

export function createRng(seed: number): Rng {
  return new Mulberry32(seed);
}

/**
 * A generator for one of many streams (an order, an injection): 128 bits of state, seeded from 96 bits of the
 * SHA-256 of `parts`. Not from `hashSeed`: its 32-bit state collides among a million orders' parts, and three
 * words drawn from one colliding state would collide together.
 */
export function createStreamRng(...parts: Array<string | number>): Rng {
  const digest = createHash('sha256')
    .update(parts.map((p) => `${p}\u0001`).join(''))
    .digest();
  return new Sfc32(digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8));
}

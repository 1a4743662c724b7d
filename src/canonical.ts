import { hash } from 'node:crypto';

/**
 * Canonical JSON and the hashes recon derives from it: the neutral ground of event ids (src/events/ids.ts),
 * the store's content hashes, discrepancy ids, migration checksums and statement figures.
 */

/** Namespace of every deterministic id recon derives (UUID v5, RFC 9562). */
export const RECON_NAMESPACE = '6f1c7a52-3d0b-5b8e-9a41-2c7d0e9b4f10';

function uuidBytes(uuid: string): Buffer {
  const bytes = Buffer.from(uuid.replace(/-/g, ''), 'hex');
  // hex decoding stops quietly at the first non-hex character: a namespace of any other length is refused
  if (bytes.length !== 16 || !/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(uuid))
    throw new TypeError(`not a UUID namespace: ${JSON.stringify(uuid)}`);
  return bytes;
}

const RECON_NAMESPACE_BYTES = uuidBytes(RECON_NAMESPACE);

/** UUID v5: SHA-1 of namespace + name, with version and variant bits set. */
export function uuidV5(name: string, namespace: string = RECON_NAMESPACE): string {
  return uuidV5Of(namespace === RECON_NAMESPACE ? RECON_NAMESPACE_BYTES : uuidBytes(namespace), name);
}

/**
 * The name may come in parts: hashed one after the other, it is the same name without building it.
 * One-shot hashing of a reused buffer (namespace, then the parts in UTF-8): a Hash object per id cost as
 * much as the hashing itself, and ids are made for every event recon writes.
 */
let nameBuffer = Buffer.allocUnsafe(4096);
function uuidV5Of(namespace: Buffer, ...nameParts: string[]): string {
  let bytes = 16;
  for (const part of nameParts) bytes += Buffer.byteLength(part, 'utf8');
  // grown for names up to 64 KiB and kept; a larger name gets a buffer of its own, not kept
  if (bytes > nameBuffer.length && bytes <= 65_536)
    nameBuffer = Buffer.allocUnsafe(Math.min(65_536, Math.max(bytes, 2 * nameBuffer.length)));
  const buffer = bytes <= nameBuffer.length ? nameBuffer : Buffer.allocUnsafe(bytes);
  namespace.copy(buffer, 0, 0, 16);
  let at = 16;
  for (const part of nameParts) at += buffer.write(part, at, 'utf8');
  const hex = hash('sha1', buffer.subarray(0, at), 'hex');
  // version 5 in the 13th hex digit, the RFC variant (10xx) in the 17th
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * JSON with object keys sorted at every level, so that equal content always gives equal text
 * (and equal ids and hashes) whatever order a source sent its fields in. Bigints become strings, unless
 * `strict`: then anything that is not plain JSON (bigint, non-finite number, function) is refused, as
 * the event store requires of event data.
 */
export function stableStringify(value: unknown, strict = false): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') {
    if (
      strict &&
      (typeof value === 'bigint' ||
        typeof value === 'function' ||
        typeof value === 'symbol' ||
        (typeof value === 'number' && !Number.isFinite(value)))
    ) {
      throw new TypeError(`${typeof value === 'number' ? String(value) : `a ${typeof value}`} is not plain JSON`);
    }
    if (typeof value === 'bigint') return JSON.stringify(value.toString());
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + stableStringify(value[i], strict);
    return out + ']';
  }
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  // Loops rather than filter/map/join: this runs for every event recon writes (its id and its hash).
  const obj = value as Record<string, unknown>;
  const keys = sortedKeys(Object.keys(obj));
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = obj[k];
    if (v === undefined) continue;
    // Strings, the commonest member, without a call.
    out +=
      (out.length > 1 ? ',' : '') +
      quotedKey(k) +
      ':' +
      (typeof v === 'string' ? JSON.stringify(v) : stableStringify(v, strict));
  }
  return out + '}';
}

/**
 * The keys in sorted order. Objects of one shape repeat in every event of a kind (a register record, its
 * `other`, a webhook): the last shape seen per key count is remembered with its order, and an object whose
 * keys are the same, in the same order, takes that order without sorting (issue 26). Keys from
 * Object.keys are interned strings, so the comparison is of references mostly.
 */
const SHAPES: Array<{ keys: string[]; sorted: string[] } | undefined> = [];
function sortedKeys(keys: string[]): string[] {
  const n = keys.length;
  if (n < 2) return keys;
  if (n > 64) return keys.sort();
  const shape = SHAPES[n];
  if (shape !== undefined) {
    const known = shape.keys;
    let i = 0;
    while (i < n && known[i] === keys[i]) i++;
    if (i === n) return shape.sorted;
  }
  const sorted = keys.slice().sort();
  SHAPES[n] = { keys, sorted };
  return sorted;
}

// Member names repeat across events (the same record shapes): quoted once. Bounded, as names come from sources.
const QUOTED_KEYS = new Map<string, string>();
function quotedKey(k: string): string {
  let q = QUOTED_KEYS.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (QUOTED_KEYS.size < 4096) QUOTED_KEYS.set(k, q);
  }
  return q;
}

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** UUID v5 in recon's namespace of a name given in parts (see uuidV5Of). */
export function reconUuidV5(...nameParts: string[]): string {
  return uuidV5Of(RECON_NAMESPACE_BYTES, ...nameParts);
}

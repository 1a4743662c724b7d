import { readFileSync } from 'node:fs';
import { handlesAny } from './handlers';
import type { Projection } from './projection';

/**
 * For tests only (test/faults/poison.test.ts): with RECON_TEST_POISON_FILE set, each projection's apply
 * throws on a batch holding an event the file lists for it (`{"<projection>": ["<event id>", …]}`), read
 * again at every batch so that a test can "fix the code" by emptying it. Unset (always, in production),
 * the projections are returned untouched.
 */
export const POISON_ENV = 'RECON_TEST_POISON_FILE';

function poisoned(file: string, name: string): Set<string> {
  try {
    const listed = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>)[name] ?? [];
    return new Set(listed.map((id) => id.toLowerCase()));
  } catch {
    return new Set();
  }
}

export function withTestPoison(list: Projection[], file: string | undefined = process.env[POISON_ENV]): Projection[] {
  if (!file) return list;
  return list.map((p) => ({
    ...p,
    // a test may poison any event for any projection (a register row for the bank's): under the hook every
    // batch reaches apply, which throws where listed and hands the rest to the projection's own apply
    handles: 'every event',
    async apply(tx, events, ctx) {
      const ids = poisoned(file, p.name);
      const hit = ids.size ? events.find((e) => ids.has(e.id.toLowerCase())) : undefined;
      if (hit) throw new Error(`injected poison (${POISON_ENV}): event ${hit.id}`);
      if (!handlesAny(p.handles, events)) return;
      return p.apply(tx, events, ctx);
    },
  }));
}

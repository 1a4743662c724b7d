/**
 * Min-heap of (due time, payment) with lazy deletion: an entry counts only while it equals the payment's
 * `due`, so moving a payment's due pushes a new entry and leaves the old one to be skipped.
 */
export interface DueHeap<P extends { due: number | null }> {
  push(at: number, p: P): void;
  /** payments whose due ≤ clock, each once */
  takeReady(clock: number): P[];
}

export function createDueHeap<P extends { due: number | null }>(): DueHeap<P> {
  const h: Array<{ at: number; p: P }> = [];
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.at <= h[i]!.at) break;
      [h[parent], h[i]] = [h[i]!, h[parent]!];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l]!.at < h[m]!.at) m = l;
      if (r < h.length && h[r]!.at < h[m]!.at) m = r;
      if (m === i) return;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  };
  return {
    push(at, p) {
      h.push({ at, p });
      up(h.length - 1);
    },
    takeReady(clock) {
      const out = new Set<P>();
      while (h.length && h[0]!.at <= clock) {
        const top = h[0]!;
        const last = h.pop()!;
        if (h.length) {
          h[0] = last;
          down(0);
        }
        if (top.p.due === top.at) out.add(top.p);
      }
      return [...out];
    },
  };
}

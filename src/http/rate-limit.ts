/**
 * Token buckets per sender for *rejected* requests only: each 4xx answer (bad signature, malformed
 * body, ...) takes a token; a sender with no token left gets a bare 429 without further work or logs.
 * Valid deliveries never take or need a token, so a flood of forged requests cannot starve them.
 */
export interface RejectionLimiter {
  /** True when the sender still has budget for one more rejection (and spends it). */
  take(sender: string, now?: number): boolean;
  /** True when the sender has no budget left (nothing is spent). */
  exhausted(sender: string, now?: number): boolean;
  size(): number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export function createRejectionLimiter(
  opts: { burst?: number; perSecond?: number; maxSenders?: number } = {},
): RejectionLimiter {
  const burst = opts.burst ?? 20;
  const perSecond = opts.perSecond ?? 5;
  const maxSenders = opts.maxSenders ?? 10_000;
  const buckets = new Map<string, Bucket>();

  function refill(sender: string, now: number): Bucket {
    let b = buckets.get(sender);
    if (!b) {
      if (buckets.size >= maxSenders) {
        // Forget full buckets first: they carry no state worth keeping.
        for (const [k, v] of buckets) if (v.tokens + ((now - v.at) / 1000) * perSecond >= burst) buckets.delete(k);
        if (buckets.size >= maxSenders) buckets.delete(buckets.keys().next().value!);
      }
      b = { tokens: burst, at: now };
      buckets.set(sender, b);
      return b;
    }
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
    return b;
  }

  return {
    take(sender, now = Date.now()) {
      const b = refill(sender, now);
      if (b.tokens < 1) return false;
      b.tokens -= 1;
      return true;
    },
    exhausted(sender, now = Date.now()) {
      return refill(sender, now).tokens < 1;
    },
    size: () => buckets.size,
  };
}

/**
 * One read of a statement's lines for its two writers: the workbook's Operations sheet and the PDF's operations
 * table list the same lines of each currency, in the same order, and are written at once (statement-job.ts), so
 * each currency's lines are read from PostgreSQL (with their details) once for both instead of once each. The
 * workbook's Audit sheet comes after its other sheets and reads them again (a second read a writer asks for is
 * a read of its own).
 *
 * The two readers take each line in turn from a shared read, which is never more than `max` lines ahead of the
 * slower one: the faster waits. A writer that is done (finished, or failed) is closed: the other then reads on
 * alone, and the read is closed when neither reads it any more.
 */
export interface LinesReader<L> {
  lines(currency: string): AsyncIterable<L>;
  /** this writer reads no more: the other is not held back by it, and reads no one needs are closed */
  close(): Promise<void>;
}

export function linesReadOnce<L>(
  read: (currency: string) => AsyncIterable<L>,
  max: number,
): readonly [LinesReader<L>, LinesReader<L>] {
  const splits = new Map<string, Split<L>>();
  const closed = [false, false];
  const reader = (k: 0 | 1): LinesReader<L> => {
    const taken = new Set<string>();
    return {
      lines(currency) {
        if (taken.has(currency) || closed[k]) return read(currency);
        taken.add(currency);
        let split = splits.get(currency);
        if (!split) {
          split = new Split(() => read(currency), max, [closed[0]!, closed[1]!]);
          splits.set(currency, split);
        }
        return split.branch(k);
      },
      async close() {
        closed[k] = true;
        await Promise.all([...splits.values()].map((s) => s.detach(k)));
      },
    };
  };
  return [reader(0), reader(1)];
}

/** One read of a currency's lines, handed to two readers (0 and 1). */
class Split<L> {
  private iterator: AsyncIterator<L> | undefined;
  private readonly queues: L[][] = [[], []];
  private readonly heads = [0, 0];
  private ended = false;
  private failed: { error: unknown } | undefined;
  private pulling: Promise<void> | undefined;
  private waiting: (() => void)[] = [];

  constructor(
    private readonly source: () => AsyncIterable<L>,
    private readonly max: number,
    private readonly gone: boolean[],
  ) {}

  branch(k: 0 | 1): AsyncIterableIterator<L> {
    const it: AsyncIterableIterator<L> = {
      [Symbol.asyncIterator]: () => it,
      next: () => this.next(k),
      return: async () => {
        await this.detach(k);
        return { value: undefined, done: true };
      },
    };
    return it;
  }

  private backlog(k: number): number {
    return this.queues[k]!.length - this.heads[k]!;
  }

  private async next(k: 0 | 1): Promise<IteratorResult<L>> {
    for (;;) {
      if (this.backlog(k) > 0) return { value: this.take(k), done: false };
      if (this.failed) throw this.failed.error;
      if (this.ended || this.gone[k]) return { value: undefined, done: true };
      const other = 1 - k;
      // the other reader is a bound behind: this one waits for it
      if (!this.gone[other] && this.backlog(other) >= this.max) await new Promise<void>((r) => this.waiting.push(r));
      else await (this.pulling ??= this.pull());
    }
  }

  private take(k: 0 | 1): L {
    const queue = this.queues[k]!;
    const value = queue[this.heads[k]!++] as L;
    if (this.heads[k] === queue.length) {
      this.queues[k] = [];
      this.heads[k] = 0;
    }
    this.notify();
    return value;
  }

  private async pull(): Promise<void> {
    try {
      this.iterator ??= this.source()[Symbol.asyncIterator]();
      const r = await this.iterator.next();
      if (r.done) this.ended = true;
      else for (let k = 0; k < 2; k++) if (!this.gone[k]) this.queues[k]!.push(r.value);
    } catch (error) {
      this.failed = { error };
    } finally {
      this.pulling = undefined;
      this.notify();
    }
  }

  private notify(): void {
    if (this.waiting.length === 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w();
  }

  /** Reader `k` reads no more; with neither reading, the read is closed (its cursor released). */
  async detach(k: 0 | 1): Promise<void> {
    if (this.gone[k]) return;
    this.gone[k] = true;
    this.queues[k] = [];
    this.heads[k] = 0;
    this.notify();
    if (this.gone[0] && this.gone[1] && this.iterator && !this.ended && !this.failed) {
      this.ended = true;
      await this.pulling;
      await this.iterator.return?.();
    }
  }
}

/**
 * The items of `source`, in its order, read up to `max` ahead of the consumer: a statement's lines come from a
 * cursor and its payments' events from the store, each batch a round trip to PostgreSQL; read ahead, the next
 * batch is on its way while the workbook or the PDF is written from this one, instead of the writer waiting for
 * it. At most `max` items are held (and a batch of `step`'s); the source is closed when the consumer stops early
 * (its error, a break).
 *
 * `step`, when given, is applied to the items a batch of `step.size` at a time as they are read (a statement's
 * lines get their details, read for the batch's payments at once: details.ts), so the lines pass through one
 * iterator instead of one per stage. The iterator is written out rather than as an async generator: a
 * generator's `yield` costs several promise turns an item, and a statement's three passes over 100k lines make
 * it 300k items.
 */
export interface BatchStep<T, U> {
  readonly size: number;
  apply(items: T[]): Promise<U[]>;
}

export function readAhead<T>(source: AsyncIterable<T>, max: number): AsyncIterableIterator<T>;
export function readAhead<T, U>(source: AsyncIterable<T>, max: number, step: BatchStep<T, U>): AsyncIterableIterator<U>;
export function readAhead<T, U>(
  source: AsyncIterable<T>,
  max: number,
  step?: BatchStep<T, U>,
): AsyncIterableIterator<T | U> {
  return new ReadAhead<T, T | U>(source, max, step as BatchStep<T, T | U> | undefined);
}

class ReadAhead<T, U> implements AsyncIterableIterator<U> {
  private queue: U[] = [];
  private head = 0;
  private ended = false;
  private failed: { error: unknown } | undefined;
  private stopped = false;
  private wakeReader: (() => void) | undefined;
  private wakePump: (() => void) | undefined;
  private pump: Promise<void> | undefined;

  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly max: number,
    private readonly step: BatchStep<T, U> | undefined,
  ) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<U> {
    return this;
  }

  next(): Promise<IteratorResult<U>> {
    this.pump ??= this.run();
    return this.head < this.queue.length ? Promise.resolve(this.take()) : this.wait();
  }

  async return(): Promise<IteratorResult<U>> {
    this.stopped = true;
    this.queue = [];
    this.head = 0;
    this.wake('pump');
    await this.pump;
    return { value: undefined, done: true };
  }

  private take(): IteratorResult<U> {
    const value = this.queue[this.head++] as U;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
    // the pump goes on once half the bound is taken, so that it reads in runs rather than an item at a time
    if (this.wakePump && this.queue.length - this.head <= this.max >> 1) this.wake('pump');
    return { value, done: false };
  }

  private async wait(): Promise<IteratorResult<U>> {
    for (;;) {
      if (this.head < this.queue.length) return this.take();
      if (this.failed) throw this.failed.error;
      if (this.ended) return { value: undefined, done: true };
      await new Promise<void>((resolve) => (this.wakeReader = resolve));
    }
  }

  private wake(which: 'pump' | 'reader'): void {
    const w = which === 'pump' ? this.wakePump : this.wakeReader;
    if (which === 'pump') this.wakePump = undefined;
    else this.wakeReader = undefined;
    w?.();
  }

  private push(items: readonly U[]): void {
    for (const item of items) this.queue.push(item);
    this.wake('reader');
  }

  private async run(): Promise<void> {
    try {
      let batch: T[] = [];
      for await (const item of this.source) {
        if (this.step) {
          batch.push(item);
          if (batch.length < this.step.size) continue;
          const done = await this.step.apply(batch);
          batch = [];
          if (this.stopped) return;
          this.push(done);
        } else {
          this.queue.push(item as unknown as U);
          this.wake('reader');
        }
        while (this.queue.length - this.head >= this.max && !this.stopped)
          await new Promise<void>((resolve) => (this.wakePump = resolve));
        if (this.stopped) return;
      }
      if (this.step && batch.length > 0 && !this.stopped) this.push(await this.step.apply(batch));
    } catch (error) {
      this.failed = { error };
    } finally {
      this.ended = true;
      this.wake('reader');
    }
  }
}

import type { z } from 'zod';
import type { NewEvent, RecordedEvent } from '../store/types';
import { stableStringify } from '../canonical';
import { eventIdFor, idFromCanonical } from './ids';

/**
 * Every event type recon writes has a name, a version and a zod schema of its data. Upcasting an old
 * version means adding a new definition, never editing one that has been written.
 */
export interface EventDefinition<T extends string, S extends z.ZodType> {
  readonly type: T;
  readonly version: number;
  readonly schema: S;
}

export function defineEvent<T extends string, S extends z.ZodType>(
  type: T,
  version: number,
  schema: S,
): EventDefinition<T, S> {
  return Object.freeze({ type, version, schema });
}

export type EventData<D> = D extends EventDefinition<string, infer S> ? z.infer<S> : never;

/**
 * Builds a new event: validates the data and derives the id from the source and the content.
 * `validated: true` skips the schema for data that a validating parser has just built in exactly the
 * schema's shape (src/psp/parse.ts, whose tests check its output against these schemas): ingestion
 * builds one such event per record, and validating it again costs more than building it.
 */
export function newEvent<T extends string, S extends z.ZodType>(
  def: EventDefinition<T, S>,
  data: z.input<S>,
  opts: { idSource?: string; idContent?: unknown; metadata?: Record<string, unknown>; validated?: boolean } = {},
): NewEvent<z.infer<S>> {
  const parsed = (opts.validated ? data : def.schema.parse(data)) as z.infer<S>;
  const source = opts.idSource ?? `${def.type}.v${def.version}`;
  if (opts.idContent !== undefined) {
    return {
      id: eventIdFor(source, opts.idContent),
      type: def.type,
      version: def.version,
      data: parsed,
      ...(opts.metadata ? { metadata: opts.metadata } : {}),
    };
  }
  // The id is derived from the data: serialise it once and hand the same text to the store.
  const canonicalData = stableStringify(parsed, true);
  return {
    id: idFromCanonical(source, canonicalData),
    type: def.type,
    version: def.version,
    data: parsed,
    canonicalData,
    ...(opts.metadata ? { metadata: opts.metadata } : {}),
  };
}

/** True when a recorded event is of this definition (type and version); its data is then validated. */
export function isEvent<T extends string, S extends z.ZodType>(
  def: EventDefinition<T, S>,
  e: RecordedEvent,
): e is RecordedEvent<z.infer<S>> & { type: T } {
  return e.type === def.type && e.version === def.version;
}

export function dataOf<T extends string, S extends z.ZodType>(
  def: EventDefinition<T, S>,
  e: RecordedEvent,
): z.infer<S> {
  return def.schema.parse(e.data) as z.infer<S>;
}

import type { z } from 'zod';
import { dataOf, type EventDefinition } from '../events/catalog';
import type { RecordedEvent } from '../store/types';

/** Any event definition of src/events: what a projection lists as the events it handles. */
export type AnyEvent = EventDefinition<string, z.ZodType>;

/**
 * The event types of these lists, once each, in their order: a projection's `handles` is made of its
 * handlers' definitions (never type names typed a second time).
 */
export function eventTypes(...lists: ReadonlyArray<readonly AnyEvent[]>): readonly AnyEvent[] {
  const byType = new Map<string, AnyEvent>();
  for (const list of lists) for (const d of list) if (!byType.has(d.type)) byType.set(d.type, d);
  return Object.freeze([...byType.values()]);
}

/** Is the event of one of these definitions (type and version, as `isEvent`)? */
export function isAnyOf(defs: readonly AnyEvent[], e: RecordedEvent): boolean {
  return defs.some((d) => d.type === e.type && d.version === e.version);
}

/**
 * Does the batch hold an event of a type the projection handles? By type, whatever the version: an event of
 * a handled type at a version the projection does not know still reaches its apply, as it did before
 * projections declared what they handle (the skip only ever leaves out types they never read).
 */
export function handlesAny(handles: readonly AnyEvent[] | 'every event', events: readonly RecordedEvent[]): boolean {
  if (handles === 'every event') return events.length > 0;
  if (handles.length === 0) return false;
  const types = new Set(handles.map((d) => d.type));
  return events.some((e) => types.has(e.type));
}

/**
 * How events reach a projection's state: a table of handlers keyed by event type, after emmett's
 * `canHandle` (the types a projection reads) and `evolve` (one event into the state). A type the table
 * does not list passes by untouched; a type listed at another version than the one recorded is not
 * handled either, as `isEvent` would not match it.
 */
export interface Handler<State> {
  readonly def: AnyEvent;
  readonly type: string;
  readonly version: number;
  handle(state: State, event: RecordedEvent): void;
}

/** A handler of one event definition, given the event's data parsed by its schema. */
export function on<T extends string, S extends z.ZodType, State>(
  def: EventDefinition<T, S>,
  handle: (state: State, data: z.infer<S>, event: RecordedEvent) => void,
): Handler<State> {
  return { def, type: def.type, version: def.version, handle: (state, e) => handle(state, dataOf(def, e), e) };
}

/** A handler given the recorded event as is: for events read field by field without their schema (hot paths). */
export function onRecorded<State>(def: AnyEvent, handle: (state: State, event: RecordedEvent) => void): Handler<State> {
  return { def, type: def.type, version: def.version, handle };
}

export interface HandlerTable<State> {
  /** the event types the table handles (a projection's `handles` is made of them) */
  readonly canHandle: readonly AnyEvent[];
  /** hands the event to its handler; false when the table has none for it */
  evolve(state: State, event: RecordedEvent): boolean;
}

export function handlerTable<State>(...handlers: readonly Handler<State>[]): HandlerTable<State> {
  const byType = new Map<string, Handler<State>>();
  for (const h of handlers) {
    if (byType.has(h.type)) throw new Error(`two handlers for event type ${h.type}`);
    byType.set(h.type, h);
  }
  return {
    canHandle: Object.freeze(handlers.map((h) => h.def)),
    evolve(state, e) {
      const h = byType.get(e.type);
      if (h === undefined || h.version !== e.version) return false;
      h.handle(state, e);
      return true;
    },
  };
}

import type { z } from 'zod';
import { dataOf, type EventDefinition } from '../events/catalog';
import type { RecordedEvent } from '../store/types';

/**
 * How events reach a projection's state: a table of handlers keyed by event type, after emmett's
 * `canHandle` (the types a projection reads) and `evolve` (one event into the state). A type the table
 * does not list passes by untouched; a type listed at another version than the one recorded is not
 * handled either, as `isEvent` would not match it.
 */
export interface Handler<State> {
  readonly type: string;
  readonly version: number;
  handle(state: State, event: RecordedEvent): void;
}

/** A handler of one event definition, given the event's data parsed by its schema. */
export function on<T extends string, S extends z.ZodType, State>(
  def: EventDefinition<T, S>,
  handle: (state: State, data: z.infer<S>, event: RecordedEvent) => void,
): Handler<State> {
  return { type: def.type, version: def.version, handle: (state, e) => handle(state, dataOf(def, e), e) };
}

/** A handler given the recorded event as is: for events read field by field without their schema (hot paths). */
export function onRecorded<State>(
  def: EventDefinition<string, z.ZodType>,
  handle: (state: State, event: RecordedEvent) => void,
): Handler<State> {
  return { type: def.type, version: def.version, handle };
}

export interface HandlerTable<State> {
  /** the event types the table handles */
  readonly canHandle: readonly string[];
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
    canHandle: [...byType.keys()],
    evolve(state, e) {
      const h = byType.get(e.type);
      if (h === undefined || h.version !== e.version) return false;
      h.handle(state, e);
      return true;
    },
  };
}

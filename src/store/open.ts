import type { Config } from '../config/env';
import type { Sql } from '../db/connect';
import { createPostgresEventStore } from './postgres';
import type { EventStore } from './types';

/**
 * The configured backend: EventStoreDB when EVENTSTORE_URL is set, PostgreSQL otherwise. The EventStoreDB
 * client (and gRPC under it) is loaded only then: it is a second or more of every command's start otherwise.
 */
export async function openEventStore(config: Pick<Config, 'eventStoreUrl'>, sql: Sql): Promise<EventStore> {
  if (!config.eventStoreUrl) return createPostgresEventStore(sql);
  const { createEventStoreDbStore } = await import('./eventstoredb');
  return createEventStoreDbStore(config.eventStoreUrl);
}

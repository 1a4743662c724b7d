import type { Config } from '../config/env';
import type { Sql } from '../db/connect';
import { createEventStoreDbStore } from './eventstoredb';
import { createPostgresEventStore } from './postgres';
import type { EventStore } from './types';

/** The configured backend: EventStoreDB when EVENTSTORE_URL is set, PostgreSQL otherwise. */
export function openEventStore(config: Pick<Config, 'eventStoreUrl'>, sql: Sql): EventStore {
  return config.eventStoreUrl ? createEventStoreDbStore(config.eventStoreUrl) : createPostgresEventStore(sql);
}

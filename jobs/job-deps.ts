import type { Config } from '../src/config/env';
import type { Sql } from '../src/db/connect';
import type { Logger } from '../src/log';
import type { EventStore } from '../src/store/types';

/** What every job runs with (a subset of the CLI runtime). */
export interface JobDeps {
  readonly config: Config;
  readonly sql: Sql;
  readonly store: EventStore;
  readonly log: Logger;
}

import type { BankConfig } from '../config/bank';
import type { Sql } from '../db/connect';
import type { Logger } from '../log';
import type { EventStore, Position } from '../store/types';
import type { ProjectionApplyError } from './errors';
import type { Projection } from './projection';

/** Where a worker thread opens its own connections: the same database and event store as the caller's. */
export interface ThreadSource {
  readonly databaseUrl: string;
  readonly eventStoreUrl?: string;
}

/** What the runner works with. */
export interface RunnerDeps {
  readonly sql: Sql;
  readonly store: EventStore;
  readonly log: Logger;
  readonly timezone: string;
  readonly graceHours: number;
  /** RECON_CONFIG's bank object, handed to the projections (absent: no bank accounts) */
  readonly bank?: BankConfig;
  /** the projections to run; default: every file of projections/ */
  readonly projections?: readonly Projection[];
  /** where a worker thread opens its connections (threads.ts); absent: the run stays on this thread */
  readonly threadSource?: ThreadSource;
}

export interface ProjectionProgress {
  readonly name: string;
  readonly schema: string;
  readonly status: 'live' | 'building';
  readonly applied: number;
  readonly position: string | null;
}

export interface RunOptions {
  /** only these projections (default: all) */
  readonly names?: readonly string[];
  /** events per transaction (default 1000) */
  readonly batchSize?: number;
  /** stop once this position is applied (events after it are left for a later run) */
  readonly until?: Position;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: ProjectionProgress) => void;
  /**
   * threads the projections are spread over (threads.ts; default 1): each other than this one a worker thread
   * with its own connections (`RunnerDeps.threadSource`) and its own read of the store
   */
  readonly threads?: number;
}

export interface ProjectionReport {
  readonly name: string;
  readonly version: number;
  /** schema of the build that is live after the run (or still building) */
  readonly schema: string;
  readonly status: 'live' | 'building';
  /** events applied by this run, over every build of the projection */
  readonly applied: number;
  /** events applied to the reported build since it started */
  readonly totalApplied: number;
  /** checkpoint of the reported build ("commit/prepare"), null when nothing was applied */
  readonly position: string | null;
  /** a new build replaced the previous live one during this run */
  readonly wentLive: boolean;
  /** another runner held the projection: nothing or only part was done by this one */
  readonly busy: boolean;
  /** events this run could not apply and set aside (quarantined), over every build of the projection */
  readonly setAside: readonly SetAsideEvent[];
}

/** An event a build set aside: recorded in projection_quarantine (docs/reliability.md, "Quarantine"). */
export interface SetAsideEvent {
  readonly eventId: string;
  readonly eventType: string;
  readonly stream: string;
  readonly position: string;
  readonly error: string;
}

export interface Report {
  readonly projections: readonly ProjectionReport[];
  /** head of the event store when the run ended */
  readonly head: string | null;
}

/** A row of projection_builds: one build (schema) of a projection, its checkpoint and its settings. */
export interface BuildRow {
  schema_name: string;
  name: string;
  version: number;
  build: number;
  status: 'building' | 'live' | 'retired';
  checkpoint: string | null;
  /** id of the event at the checkpoint (migration 0800); null before the first check since, or when nothing was applied */
  checkpoint_event_id: string | null;
  events_applied: bigint;
  /** the settings this build applies events with (migration 0700); null only before its first run since */
  timezone: string | null;
  grace_hours: number | null;
  /** RECON_CONFIG's bank object this build applies events with (migration 1700), canonical JSON */
  bank_settings: string | null;
}

/** A build the run advances, and how far it got. */
export interface Target {
  readonly p: Projection;
  readonly build: BuildRow;
  applied: number;
  active: boolean;
  caughtUp: boolean;
  busy: boolean;
  /** the events it set aside in this run */
  setAside: SetAsideEvent[];
  /** the batch it could not apply (the others carry on without it) */
  failed?: ProjectionApplyError;
}

import type postgres from 'postgres';
import type { BankConfig } from '../config/bank';
import type { RecordedEvent } from '../store/types';
import type { AnyEvent } from './handlers';

/**
 * A read model built from the event store. One file per projection in projections/. The runner
 * (src/projector/runner.ts) feeds events in commit order and, in one PostgreSQL transaction, applies a
 * batch and moves the projection's checkpoint: each event takes effect exactly once.
 *
 * Tables live in a schema of their own per build (`ctx.schema`, e.g. rm_journal_v1_b1), so that a new
 * version builds beside the old one; readers use the stable views each projection publishes in schema
 * `recon` (re-pointed by the runner when a build goes live), never the build schema directly.
 */
export type Tx = postgres.TransactionSql<{ bigint: bigint }>;

export interface ProjectionContext {
  /** the build's schema: qualify every table with it (sql(ctx.schema) as identifier) */
  readonly schema: string;
  /** business time zone (RECON_TIMEZONE) for day and month membership */
  readonly timezone: string;
  readonly graceHours: number;
  /** bank accounts and settlement rules (RECON_CONFIG's bank object); absent: no bank accounts */
  readonly bank?: BankConfig;
}

export interface Projection {
  readonly name: string;
  readonly version: number;
  /**
   * The event types it reads, after emmett's `canHandle`: the definitions of src/events its handlers and its
   * clock read (src/projector/handlers.ts `eventTypes`). A batch holding none of them is not handed to
   * `apply`: the runner moves the checkpoint alone (checkpoints.ts), so the build stays caught up and its
   * rows equal a replay that applied every batch. `'every event'` for a projection that reads any (tests).
   */
  readonly handles: readonly AnyEvent[] | 'every event';
  /** reads ctx.bank: a change of the bank settings replaces its build like a change of time zone */
  readonly usesBank?: boolean;
  /**
   * Its rows depend on the order of the events (a judging clock, a discrepancy's lifecycle): an event it set
   * aside is applied again by a replay from zero (a build beside the live one), not in place, so that the
   * read model equals a replay (`recon quarantine retry`, src/projector/quarantine.ts).
   */
  readonly retryByReplay?: boolean;
  /** creates the tables in ctx.schema (an empty schema made for this build) */
  setup(tx: Tx, ctx: ProjectionContext): Promise<void>;
  /** applies a batch of events (commit order) inside the runner's transaction; must be deterministic */
  apply(tx: Tx, events: readonly RecordedEvent[], ctx: ProjectionContext): Promise<void>;
  /**
   * `create or replace view recon.<name> as select ... from <ctx.schema>.<table>` statements, run by the
   * runner when this build goes live. These are the documented views auditors query.
   */
  views(ctx: ProjectionContext): readonly string[];
}

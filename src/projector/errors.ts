import { ReconError } from '../errors';

/**
 * A build's checkpoint is past the event store's head: the read model holds events the store no longer
 * has (the store was restored from an older backup, or replaced, and the read models were not). Carrying
 * on would skip every event appended below the checkpoint, silently; the build must be rebuilt.
 */
export class ProjectionAheadOfStoreError extends ReconError {
  readonly kind = 'configuration';
  readonly code = 'PROJECTION_AHEAD_OF_STORE';
  constructor(
    readonly projection: string,
    readonly schema: string,
    readonly checkpoint: string,
    readonly head: string | null,
  ) {
    super(
      `projection ${projection} (build ${schema}) is at position ${checkpoint}, past the event store's head ${head ?? '(empty store)'}: ` +
        'the event store was restored from an older backup or replaced while the read models were not; rebuild them with recon project --rebuild',
    );
    this.name = 'ProjectionAheadOfStoreError';
  }
}

/**
 * The event at a build's checkpoint is not the one the build last applied (or there is none): the event
 * store was restored from an older backup and appended to again past the checkpoint, or replaced, while
 * the read models were not. The checkpoint is below the head, so the head alone cannot show it; carrying
 * on would skip the events now stored below the checkpoint and keep effects of events the store lost.
 */
export class ProjectionCheckpointMismatchError extends ReconError {
  readonly kind = 'configuration';
  readonly code = 'PROJECTION_CHECKPOINT_MISMATCH';
  constructor(
    readonly projection: string,
    readonly schema: string,
    readonly checkpoint: string,
    readonly applied: string | null,
    readonly found: string | null,
  ) {
    super(
      `projection ${projection} (build ${schema}) last applied event ${applied ?? '(not recorded)'} at position ${checkpoint}, ` +
        `but the event store holds ${found ? `event ${found}` : 'no event'} there: the event store was restored from an older backup and ` +
        'appended to since, or replaced, while the read models were not; rebuild them with recon project --rebuild',
    );
    this.name = 'ProjectionCheckpointMismatchError';
  }
}

/**
 * A projection's `apply` threw on a batch: nothing of that batch was written (its transaction rolled back
 * with the checkpoint), and the next run tries it again. Names the projection, its build and the batch.
 */
export class ProjectionApplyError extends ReconError {
  readonly kind = 'internal';
  readonly code = 'PROJECTION_APPLY_FAILED';
  constructor(
    readonly projection: string,
    readonly schema: string,
    readonly from: string,
    readonly to: string,
    cause: unknown,
  ) {
    super(
      `projection ${projection} (build ${schema}) could not apply the events ${from} to ${to}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'ProjectionApplyError';
  }
}

/** Every projection that failed in a run, after the others went as far as they could. */
export class ProjectionsFailedError extends ReconError {
  readonly kind = 'internal';
  readonly code = 'PROJECTIONS_FAILED';
  constructor(readonly failures: readonly ProjectionApplyError[]) {
    super(failures.map((f) => f.message).join('; '), { cause: failures[0] });
    this.name = 'ProjectionsFailedError';
  }
}

import * as grpc from '@grpc/grpc-js';
import {
  CancelledError,
  DeadlineExceededError,
  NotLeaderError,
  UnavailableError,
  type AllStreamResolvedEvent,
  type ResolvedEvent,
  type StreamingRead,
} from '@eventstore/db-client';
import { StoreUnavailableError } from './errors';
import type { RecordedEvent } from './types';

/** The metadata entry recon writes on each event: what the server does not keep for it. */
export const RECON_META = '$recon';

export interface ReconMeta {
  readonly version: number;
  readonly contentHash: string;
  readonly appendId?: string;
}

export function reconMetaOf(metadata: unknown): ReconMeta | undefined {
  return (metadata as Record<string, unknown> | undefined)?.[RECON_META] as ReconMeta | undefined;
}

export function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e || e.type.startsWith('$') || e.streamId.startsWith('$') || !e.isJson) return undefined;
  const meta = (e.metadata ?? {}) as Record<string, unknown>;
  const recon = meta[RECON_META] as ReconMeta | undefined;
  if (!recon) return undefined; // not written by recon
  const { [RECON_META]: _omit, ...metadata } = meta;
  if (!e.position) return undefined; // every committed event read from a stream or $all has one
  const position = { commit: e.position.commit, prepare: e.position.prepare };
  return {
    id: e.id,
    stream: e.streamId,
    revision: Number(e.revision),
    position,
    // an event written without an append id was written alone: its position names its append
    appendId: recon.appendId ?? `position-${position.commit}`,
    type: e.type,
    version: recon.version,
    data: e.data,
    metadata,
    recordedAt: new Date(e.created),
  };
}

/**
 * Consumes a read until `take` returns false, then cancels the call. Leaving a `for await` early only
 * destroys the client's stream object: the gRPC call stays open, holding one of the connection's 100
 * concurrent streams while the server waits for the client to read on, and the client's `dispose` waits
 * for it forever. So the loop cancels and then reads on to the end of what was already received.
 */
export async function consume<E>(read: StreamingRead<E>, take: (e: E) => boolean | undefined): Promise<void> {
  let stopped = false;
  try {
    for await (const e of read) {
      if (stopped) continue;
      if (take(e) === false) {
        stopped = true;
        await read.cancel();
      }
    }
  } finally {
    if (!stopped) await read.cancel().catch(() => undefined);
  }
}

/** The server cannot be reached, or did not answer in time: nothing is known to have happened. */
export function isUnavailable(e: unknown): boolean {
  if (
    e instanceof UnavailableError ||
    e instanceof DeadlineExceededError ||
    e instanceof NotLeaderError ||
    e instanceof CancelledError
  )
    return true;
  const code = (e as { code?: unknown })?.code;
  return code === grpc.status.UNAVAILABLE || code === grpc.status.DEADLINE_EXCEEDED;
}

export async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isUnavailable(e)) throw new StoreUnavailableError(`EventStoreDB unavailable: ${(e as Error).message}`, e);
    throw e;
  }
}

/** kurrentdb:// and kurrent:// (KurrentDB's names) as the esdb:// the client 6.2.1 parses. */
export function clientConnectionString(url: string): string {
  return url.replace(/^(?:kurrentdb|kurrent)(\+discover)?:\/\//i, (_m, discover: string | undefined) => {
    return `esdb${discover ?? ''}://`;
  });
}

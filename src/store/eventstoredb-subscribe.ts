import {
  END,
  START,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventStoreDBClient,
} from '@eventstore/db-client';
import { StoreError, StoreUnavailableError } from './errors';
import { toRecorded } from './eventstoredb-read';
import { comparePositions, formatPosition, type Position, type RecordedEvent } from './types';

/**
 * $all as recon reads it: through subscriptions filtered on the server, which leaves out the server's own
 * streams ("$..."; recon never writes one). Events of other applications pass the filter and are left
 * out by the client (they carry no `$recon` metadata). A subscription, unlike the client's readAll,
 * takes a filter, reports checkpoints (how far the server looked, matching or not) and says when it has
 * caught up, so one call both catches up and, kept open, tails the log.
 */

/**
 * Stream names outside the server's own: its system and metadata streams start with "$" (the same rule
 * as the client's `excludeSystemEvents`, on stream names rather than event types).
 */
const NOT_SYSTEM = '^[^$]';

/** Positions remembered past the last event of recon a read returned (one per follower, in practice). */
const MAX_SKIPS = 64;

const CHECKPOINT = Symbol('checkpoint');
const CAUGHT_UP = Symbol('caught up');
type Marker = { readonly [CHECKPOINT]: Position } | { readonly [CAUGHT_UP]: true };

const key = (p: Position | undefined) => (p ? formatPosition(p) : 'start');
const later = (a: Position | undefined, b: Position) => (a && comparePositions(a, b) >= 0 ? a : b);

/** Ends the gRPC call of a subscription; the client's own `unsubscribe` cancels it on the next turn. */
async function cancel(sub: AllStreamSubscription): Promise<void> {
  await sub.unsubscribe().catch(() => undefined);
  sub.destroy();
}

/** The configured server cannot serve recon's reads: an operator's fix (upgrade), not a retry. */
export class ServerTooOldError extends StoreError {
  constructor(message: string) {
    super('SERVER_TOO_OLD', message);
    this.name = 'ServerTooOldError';
  }
}

/** The first server version that tells a subscription it caught up ("Add CaughtUp control message"). */
const CAUGHT_UP_SINCE = [23, 10] as const;

/**
 * Refuses a server too old to say "caught up", on which a catch-up read would wait for the next event
 * instead of returning. The version comes from the server's ServerFeatures answer (21.10 and later;
 * the client calls an older server's version unknown).
 */
function requireCaughtUp(client: EventStoreDBClient): Promise<void> {
  const features = (client as unknown as { capabilities: Promise<{ serverVersion: string }> }).capabilities;
  const asked = features.catch((e: unknown) => {
    // the client hands the failure on as gRPC gave it (a cut connection is CANCELLED): not a verdict
    throw new StoreUnavailableError(`EventStoreDB unavailable: ${(e as Error).message}`, e);
  });
  return asked.then(({ serverVersion }) => {
    const [major = 0, minor = 0] = (/^(\d+)\.(\d+)/.exec(serverVersion) ?? []).slice(1).map(Number);
    const [needMajor, needMinor] = CAUGHT_UP_SINCE;
    if (major > needMajor || (major === needMajor && minor >= needMinor)) return;
    throw new ServerTooOldError(
      `EventStoreDB server version ${serverVersion}: recon needs ${needMajor}.${needMinor} or later ` +
        '(its subscriptions say when they caught up); upgrade the server (docker-compose.yml pins 24.10.0)',
    );
  });
}

/**
 * Catch-up reads of $all. A read returns the events of recon after `from`, up to `limit`, and stops when
 * the server says the subscription caught up (EventStoreDB 23.10 and later send that message). When the
 * server's checkpoints passed the last event returned, the read remembers where, so the next read from
 * that event starts there: a follower past a long run of other events does not have them scanned again
 * on every read.
 */
export function createAllReader(client: EventStoreDBClient) {
  const skips = new Map<string, Position>();
  let checked: Promise<void> | undefined;

  function remember(after: Position | undefined, resumeAt: Position) {
    skips.delete(key(after));
    skips.set(key(after), resumeAt);
    if (skips.size > MAX_SKIPS) skips.delete(skips.keys().next().value!);
  }

  return async function readAll(from: Position | undefined, limit: number): Promise<RecordedEvent[]> {
    // checked once; a failure to reach the server is asked again on the next read
    checked ??= requireCaughtUp(client).catch((e: unknown) => {
      if (!(e instanceof ServerTooOldError)) checked = undefined;
      throw e;
    });
    await checked;
    const start = skips.get(key(from)) ?? from;
    return new Promise<RecordedEvent[]>((resolve, reject) => {
      const out: RecordedEvent[] = [];
      let passed: Position | undefined; // furthest position the server looked at, events and checkpoints
      let done = false;
      // The client reports checkpoints and "caught up" as callbacks and events of their own, beside the
      // stream of events, whose delivery may lag: both are put into the stream as markers, in order.
      const sub = client.subscribeToAll({
        fromPosition: start ?? START,
        resolveLinkTos: false,
        filter: streamNameFilter({
          regex: NOT_SYSTEM,
          checkpointInterval: 1,
          checkpointReached: (s, p) => {
            s.push({ [CHECKPOINT]: { commit: p.commit, prepare: p.prepare } } satisfies Marker);
          },
        }),
      });
      sub.on('caughtUp', () => sub.push({ [CAUGHT_UP]: true } satisfies Marker));
      const finish = (error?: unknown) => {
        if (done) return;
        done = true;
        void cancel(sub).then(() => {
          if (error !== undefined) return reject(error);
          // Caught up: every event up to `passed` was received, and those after the last returned are not
          // recon's. (A read stopped at `limit` may have received more than it returned: nothing is kept.)
          // (From the start, a checkpoint at 0/0 is no progress: a read from 0/0 would leave out an event there.)
          const last = out.at(-1)?.position ?? from;
          const moved = passed && (last ? comparePositions(passed, last) > 0 : passed.commit > 0n);
          if (out.length < limit && moved) remember(last, passed!);
          resolve(out);
        });
      };
      sub.on('data', (item: AllStreamResolvedEvent | Marker) => {
        if (done) return;
        if (CAUGHT_UP in item) return finish();
        if (CHECKPOINT in item) {
          passed = later(passed, item[CHECKPOINT]);
          return;
        }
        const p = item.event?.position;
        if (p) passed = later(passed, { commit: p.commit, prepare: p.prepare });
        const r = toRecorded(item);
        if (!r) return;
        out.push(r);
        if (out.length >= limit) finish();
      });
      sub.on('error', (e: unknown) => finish(e));
    });
  };
}

/** Milliseconds before a live subscription cut off (a restart, a network failure) is opened again. */
const RETRY_MS = [250, 1000, 5000, 15_000];

/**
 * Calls `onAppended` for every event of recon appended from now on, through a live subscription to $all
 * filtered as above, and once each time the subscription is confirmed (again): whatever was appended
 * while it was not open is then read by the caller. A cut-off subscription is opened again after a
 * pause, for as long as the watch lasts. Returns the function that ends it.
 */
export function watchAll(client: EventStoreDBClient, onAppended: () => void): () => Promise<void> {
  let stopped = false;
  let sub: AllStreamSubscription | undefined;
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;

  function open() {
    if (stopped) return;
    const s = client.subscribeToAll({
      fromPosition: END,
      resolveLinkTos: false,
      filter: streamNameFilter({ regex: NOT_SYSTEM }),
    });
    sub = s;
    s.on('confirmation', () => {
      failures = 0;
      onAppended();
    });
    s.on('data', (resolved: AllStreamResolvedEvent) => {
      if (toRecorded(resolved)) onAppended();
    });
    s.on('error', () => {
      if (stopped || sub !== s) return;
      sub = undefined;
      void cancel(s);
      timer = setTimeout(open, RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]);
    });
  }

  open();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    const s = sub;
    sub = undefined;
    if (s) await cancel(s);
  };
}

import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import * as pb from '@eventstore/db-client/generated/streams_pb';
import type { StandinLog, StoredRecord } from './log';
import { drained, recordedEvent, serviceError } from './wire';

/**
 * Subscriptions to $all in the EventStoreDB stand-in (a test double, not EventStoreDB), after the
 * server's src/EventStore.Core/Services/Transport/Enumerators/Enumerator.AllSubscriptionFiltered.cs and
 * Enumerator.AllSubscription.cs (tag v24.10.0, the version docker-compose.yml pins). Not modelled: the
 * "fell behind" switch back to catching up when the live buffer of 32 overflows (the server does not
 * send that message to clients: Streams.Read.cs), subscriptions to one stream, link resolution.
 */

/** Enumerator.cs: ReadBatchSize, the page a catch-up reads and the default search window. */
const READ_BATCH_SIZE = 32;

interface Filter {
  allows(r: StoredRecord): boolean;
  /** Events considered between two checkpoints (none for an unfiltered subscription). */
  readonly checkpointInterval: number | undefined;
  readonly maxSearchWindow: number;
}

/**
 * Streams.Read.cs (ConvertToEventFilter and the AllSubscriptionFiltered case): a filter on the stream name
 * or the event type, by regex (unanchored, .NET Regex.IsMatch) or by prefixes; the search window is
 * `max`, or ReadBatchSize for `count`; a checkpoint every multiplier × window events considered.
 */
function filterOf(options: pb.ReadReq.Options): Filter {
  if (!options.hasFilter())
    return { allows: () => true, checkpointInterval: undefined, maxSearchWindow: READ_BATCH_SIZE };
  const f = options.getFilter()!;
  const onStream = f.hasStreamIdentifier();
  const expression = (onStream ? f.getStreamIdentifier() : f.getEventType())!;
  const regex = expression.getRegex() ? new RegExp(expression.getRegex()) : undefined;
  const prefixes = expression.getPrefixList();
  const maxSearchWindow = f.hasMax() ? f.getMax() : READ_BATCH_SIZE;
  return {
    allows: (r) => {
      const value = onStream ? r.stream : r.type;
      return regex ? regex.test(value) : prefixes.some((p) => value.startsWith(p));
    },
    checkpointInterval: f.getCheckpointintervalmultiplier() * maxSearchWindow,
    maxSearchWindow,
  };
}

export interface SubscriptionStats {
  subscriptionsStarted: number;
  /**
   * Records the server looked at for reads: every record a catch-up considered, matching the filter or
   * not (the server's "considered events"), and every record a plain read sent.
   */
  recordsLookedAt: number;
  checkpointsSent: number;
  eventsSent: number;
}

type Call = grpc.ServerWritableStream<pb.ReadReq, pb.ReadResp>;

/** Writes a subscription's messages under flow control, none once the call is closed. */
function senderFor(call: Call, stats: SubscriptionStats, isOpen: () => boolean) {
  const send = async (fill: (resp: pb.ReadResp) => void) => {
    if (!isOpen()) return;
    const resp = new pb.ReadResp();
    fill(resp);
    if (!call.write(resp)) await drained(call);
  };
  return {
    send,
    event(r: StoredRecord) {
      stats.eventsSent++;
      return send((resp) => resp.setEvent(recordedEvent(r)));
    },
    checkpoint(at: bigint) {
      stats.checkpointsSent++;
      return send((resp) => {
        const c = new pb.ReadResp.Checkpoint();
        c.setCommitPosition(at.toString());
        c.setPreparePosition(at.toString());
        resp.setCheckpoint(c);
      });
    },
  };
}

type Sender = ReturnType<typeof senderFor>;

/** Serves one subscription to $all until the client cancels it or the connection is cut. */
export async function serveSubscription(
  call: Call,
  log: StandinLog,
  stats: SubscriptionStats,
  isOpen: () => boolean,
): Promise<void> {
  const options = call.request.getOptions()!;
  if (!options.hasAll()) {
    call.emit('error', serviceError(grpc.status.UNIMPLEMENTED, 'the stand-in serves subscriptions to $all only'));
    return;
  }
  stats.subscriptionsStarted++;
  const filter = filterOf(options);
  const out = senderFor(call, stats, isOpen);
  // SubscribeToLive: the live feed is joined before catching up, so nothing written meanwhile is missed;
  // its events at or before the catch-up's last position are skipped later (GoLive).
  const live: StoredRecord[] = [];
  let wake: (() => void) | undefined;
  const unlisten = log.onVisible((records) => {
    live.push(...records);
    wake?.();
  });
  const stop = () => wake?.();
  call.on('cancelled', stop);
  call.on('close', stop);
  const next = async (): Promise<StoredRecord | undefined> => {
    while (isOpen()) {
      const r = live.shift();
      if (r) return r;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
    return undefined;
  };
  try {
    // The confirmation comes first, carrying the subscription's id (ConfirmSubscription); the client
    // emits "confirmation" on it.
    const confirmedAt = log.lastPosition();
    await out.send((resp) => {
      const c = new pb.ReadResp.SubscriptionConfirmation();
      c.setSubscriptionId(randomUUID());
      resp.setConfirmation(c);
    });
    // ConvertCheckpoint: from the start is -1 (the first event included), from the end is the last
    // position at confirmation, a position is exclusive (events at or before it are not sent).
    const all = options.getAll()!;
    let checkpoint = all.hasStart() ? -1n : all.hasEnd() ? confirmedAt : BigInt(all.getPosition()!.getCommitPosition());
    if (checkpoint < confirmedAt) {
      // A catch-up read from where no record starts is refused, as reads are (FilteredReadAllResult.
      // InvalidPosition → RpcExceptions.InvalidPositionException, INVALID_ARGUMENT).
      if (checkpoint >= 0n && !log.isBoundary(checkpoint)) {
        call.emit('error', serviceError(grpc.status.INVALID_ARGUMENT, 'Trying to read from an invalid position.'));
        return;
      }
      checkpoint = await catchUp(log, filter, out, stats, checkpoint, isOpen);
    }
    if (!isOpen()) return;
    // GoLive: "caught up" (sent since EventStoreDB 23.10: "Add CaughtUp control message for
    // subscriptions"), then live events after the last position sent.
    await out.send((resp) => resp.setCaughtUp(new pb.ReadResp.CaughtUp()));
    let considered = 0;
    for (let r = await next(); r; r = await next()) {
      if (r.position <= checkpoint) continue;
      if (filter.allows(r)) {
        await out.event(r);
        checkpoint = r.position;
      }
      // SubscriptionsService.ProcessEventCommited: live checkpoints every `interval` events committed,
      // matching or not, at that event's position.
      if (filter.checkpointInterval !== undefined && ++considered >= filter.checkpointInterval) {
        considered = 0;
        await out.checkpoint(r.position);
        checkpoint = r.position;
      }
    }
  } finally {
    unlisten();
  }
}

/**
 * CatchUp: filtered pages of up to ReadBatchSize matching events, each looking at no more than the
 * search window (AllReader.ReadAllEventsForwardFiltered); a checkpoint each time the events considered
 * reach the interval, at the page's start position (CurrentPos) when that is further, and one at the
 * end at the last position sent. Returns that position.
 */
async function catchUp(
  log: StandinLog,
  filter: Filter,
  out: Sender,
  stats: SubscriptionStats,
  from: bigint,
  isOpen: () => boolean,
): Promise<bigint> {
  let checkpoint = from;
  let pageStart = from < 0n ? 0n : from;
  let counter = 0;
  for (;;) {
    if (!isOpen()) return checkpoint;
    const matched: StoredRecord[] = [];
    let considered = 0;
    let next: bigint | undefined;
    for (const r of log.scanFrom(pageStart)) {
      if (matched.length >= READ_BATCH_SIZE || considered >= filter.maxSearchWindow) {
        next = r.position;
        break;
      }
      considered++;
      if (filter.allows(r)) matched.push(r);
    }
    stats.recordsLookedAt += considered;
    for (const r of matched) {
      if (r.position <= checkpoint) continue;
      await out.event(r);
      checkpoint = r.position;
    }
    counter += considered;
    if (next === undefined) {
      if (filter.checkpointInterval !== undefined && checkpoint >= 0n) await out.checkpoint(checkpoint);
      return checkpoint;
    }
    if (filter.checkpointInterval !== undefined && counter >= filter.checkpointInterval) {
      counter %= filter.checkpointInterval;
      if (checkpoint < pageStart) checkpoint = pageStart;
      await out.checkpoint(checkpoint);
    }
    pageStart = next;
  }
}

import * as grpc from '@grpc/grpc-js';
import { Any } from 'google-protobuf/google/protobuf/any_pb';
import { ServerFeaturesService } from '@eventstore/db-client/generated/serverfeatures_grpc_pb';
import { SupportedMethod, SupportedMethods } from '@eventstore/db-client/generated/serverfeatures_pb';
import * as shared from '@eventstore/db-client/generated/shared_pb';
import { Status } from '@eventstore/db-client/generated/status_pb';
import { StreamsService } from '@eventstore/db-client/generated/streams_grpc_pb';
import * as pb from '@eventstore/db-client/generated/streams_pb';
import { drained, identifier, recordedEvent, serviceError, streamName, uuid } from './wire';
import { serveSubscription, type SubscriptionStats } from './subscription';
import { createLog, type Decision, type Expected, type ProposedEvent, type StoredRecord } from './log';

/**
 * A stand-in for the EventStoreDB/KurrentDB gRPC server, for tests only: it is not EventStoreDB. It serves
 * the service definitions the client package ships (@eventstore/db-client/generated/*_grpc_pb.js:
 * Streams.Read/Append/BatchAppend and ServerFeatures) from an in-memory log, reproducing the behaviours
 * recon depends on (see log.ts for the append decisions):
 * - at most 100 concurrent streams per connection: Kestrel's default Http2.MaxStreamsPerConnection, which
 *   the server does not change (ASP.NET Core docs, "Configure options for the Kestrel web server");
 * - the 1 MiB MaxAppendSize (server option MaxAppendSize, default 1,048,576 bytes: docs "Database
 *   settings"; checked in src/EventStore.Core/Services/Transport/Grpc/Streams.Append.cs), refused with
 *   the trailers the client reads ("exception: maximum-append-size-exceeded");
 * - subscriptions to $all, filtered or not, with the confirmation, checkpoints, "caught up" and live
 *   events (subscription.ts);
 * - reads stream their events under HTTP/2 flow control: a read the client stops consuming stays open
 *   until the client cancels it (grpc-js and Kestrel both wait for the window);
 * - a restart: every connection and call is cut, the log is kept (what was written stays written).
 */

export interface StandinOptions {
  /** Bytes of data, metadata and type one append may carry (default 1 MiB). */
  readonly maxAppendSize?: number;
  /** Milliseconds between writing an append and acknowledging it (default 0). */
  readonly ackDelayMs?: number;
  /** The server version ServerFeatures reports (default 24.10.0, the one docker-compose.yml pins). */
  readonly serverVersion?: string;
  /** Which server's answer to a read from inside a record (default: 24.10's). */
  readonly invalidPositionAs?: 'v24.10' | 'v23.10';
}

export interface EsdbStandin {
  readonly url: string;
  readonly port: number;
  readonly stats: {
    readsStarted: number;
    openReads: number;
    /** Most reads open at once. */
    peakOpenReads: number;
    eventsSent: number;
    appends: number;
  } & SubscriptionStats;
  /** Appends events to a system stream ("$..."), as the server writes its own. */
  appendSystemEvents(count: number): void;
  setAckDelay(ms: number): void;
  /** Replaces an event's data in place (log.ts `rewrite`), as tampering with the server's files would. */
  rewrite(eventId: string, data: string): void;
  /** Cuts every connection and call, as a crash, and serves the same log again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const MiB = 1024 * 1024;

function proposed(m: pb.AppendReq.ProposedMessage | pb.BatchAppendReq.ProposedMessage): ProposedEvent {
  const meta = m.getMetadataMap();
  return {
    id: m.getId()?.getString() ?? '',
    type: meta.get('type') ?? '',
    contentType: meta.get('content-type') ?? 'application/octet-stream',
    data: m.getData_asU8(),
    metadata: m.getCustomMetadata_asU8(),
  };
}

function appendSize(events: readonly ProposedEvent[]): number {
  return events.reduce((n, e) => n + e.data.length + e.metadata.length + Buffer.byteLength(e.type), 0);
}

function maxSizeError(max: number): grpc.ServiceError {
  return serviceError(grpc.status.INVALID_ARGUMENT, `Maximum Append Size of ${max} Exceeded.`, {
    exception: 'maximum-append-size-exceeded',
    'maximum-append-size': String(max),
  });
}

export async function startEsdbStandin(opts: StandinOptions = {}): Promise<EsdbStandin> {
  const log = createLog();
  const maxAppendSize = opts.maxAppendSize ?? MiB;
  let ackDelayMs = opts.ackDelayMs ?? 0;
  const invalidPositionAs = opts.invalidPositionAs ?? 'v24.10';
  const stats = {
    readsStarted: 0,
    openReads: 0,
    peakOpenReads: 0,
    eventsSent: 0,
    appends: 0,
    subscriptionsStarted: 0,
    recordsLookedAt: 0,
    checkpointsSent: 0,
  };
  let server: grpc.Server;
  let port = 0;

  /** The records a read asks for, in the order it asks for them. */
  function selectRecords(options: pb.ReadReq.Options): StoredRecord[] | 'stream_not_found' | 'invalid_position' {
    const backwards = options.getReadDirection() === pb.ReadReq.Options.ReadDirection.BACKWARDS;
    const count = Number(options.getCount());
    if (options.hasStream()) {
      const so = options.getStream()!;
      const list = log.streamRecords(streamName(so.getStreamIdentifier()));
      if (!list) return 'stream_not_found';
      const from = so.hasRevision()
        ? Number(so.getRevision())
        : so.hasEnd()
          ? Number.MAX_SAFE_INTEGER
          : backwards
            ? -1
            : 0;
      const picked = backwards
        ? list.filter((r) => from === -1 || r.revision <= from).reverse()
        : list.filter((r) => r.revision >= from);
      return picked.slice(0, count);
    }
    const ao = options.getAll()!;
    const all = log.allRecords();
    if (ao.hasPosition()) {
      const at = BigInt(ao.getPosition()!.getCommitPosition());
      // A position inside a record is refused ("Trying to read from an invalid position", KurrentDB #3991).
      if (!log.isBoundary(at)) return 'invalid_position';
      return (backwards ? all.filter((r) => r.position < at).reverse() : all.filter((r) => r.position >= at)).slice(
        0,
        count,
      );
    }
    const fromEnd = ao.hasEnd();
    if (backwards) return fromEnd ? all.slice().reverse().slice(0, count) : [];
    return fromEnd ? [] : all.slice(0, count);
  }

  async function read(call: grpc.ServerWritableStream<pb.ReadReq, pb.ReadResp>): Promise<void> {
    stats.readsStarted++;
    stats.openReads++;
    stats.peakOpenReads = Math.max(stats.peakOpenReads, stats.openReads);
    let open = true;
    const closed = () => {
      if (open) stats.openReads--;
      open = false;
    };
    call.on('cancelled', closed);
    call.on('close', closed);
    try {
      const options = call.request.getOptions()!;
      if (options.hasSubscription()) return await serveSubscription(call, log, stats, () => open);
      // Filtered reads that are not subscriptions: the client 6.2.1 cannot ask for them (its readAll has
      // no filter option).
      if (options.hasFilter()) {
        call.emit('error', serviceError(grpc.status.UNIMPLEMENTED, 'the stand-in filters subscriptions only'));
        return;
      }
      const picked = selectRecords(options);
      if (picked === 'invalid_position') {
        // From 24.2 on (RpcExceptions.InvalidPositionException, tag v24.10.0): INVALID_ARGUMENT. Before, the
        // reader's catch-all answered ReadAllResult.Error, sent as UNKNOWN "Unexpected ReadAllResult: Error"
        // (StorageReaderWorker.cs and Enumerators.ReadAllForwards.cs, tag oss-v23.10.0).
        call.emit(
          'error',
          invalidPositionAs === 'v23.10'
            ? serviceError(grpc.status.UNKNOWN, 'Unexpected ReadAllResult: Error')
            : serviceError(grpc.status.INVALID_ARGUMENT, 'Trying to read from an invalid position.'),
        );
        return;
      }
      if (picked === 'stream_not_found') {
        const resp = new pb.ReadResp();
        const nf = new pb.ReadResp.StreamNotFound();
        nf.setStreamIdentifier(options.getStream()!.getStreamIdentifier());
        resp.setStreamNotFound(nf);
        call.write(resp);
        call.end();
        return;
      }
      for (const r of picked) {
        if (!open) return;
        const resp = new pb.ReadResp();
        resp.setEvent(recordedEvent(r));
        stats.eventsSent++;
        stats.recordsLookedAt++;
        // Flow control: a client that stops reading holds this read open until it cancels.
        if (!call.write(resp)) await drained(call);
      }
      if (open) call.end();
    } catch {
      closed();
    }
  }

  function expectedOf(o: pb.AppendReq.Options | pb.BatchAppendReq.Options): Expected {
    if (o instanceof pb.AppendReq.Options && o.hasRevision()) return { kind: 'revision', n: Number(o.getRevision()) };
    if (o instanceof pb.BatchAppendReq.Options && o.hasStreamPosition())
      return { kind: 'revision', n: Number(o.getStreamPosition()) };
    if (o.hasNoStream()) return { kind: 'no_stream' };
    if (o.hasStreamExists()) return { kind: 'stream_exists' };
    return { kind: 'any' };
  }

  /** Runs an append; `reply` gets the decision once acknowledged (never for a dropped repeat). */
  function decideAppend(stream: string, expected: Expected, events: ProposedEvent[], reply: (d: Decision) => void) {
    stats.appends++;
    const decision = log.append(stream, expected, events, ackDelayMs);
    if (decision.kind === 'dropped') return;
    if (decision.kind === 'written' && ackDelayMs > 0) setTimeout(() => reply(decision), ackDelayMs);
    else reply(decision);
  }

  function append(call: grpc.ServerReadableStream<pb.AppendReq, pb.AppendResp>, cb: grpc.sendUnaryData<pb.AppendResp>) {
    let options: pb.AppendReq.Options | undefined;
    const events: ProposedEvent[] = [];
    call.on('data', (req: pb.AppendReq) => {
      if (req.hasOptions()) options = req.getOptions();
      else if (req.hasProposedMessage()) events.push(proposed(req.getProposedMessage()!));
    });
    call.on('end', () => {
      if (!options) return cb(serviceError(grpc.status.INVALID_ARGUMENT, 'no options'));
      if (appendSize(events) > maxAppendSize) return cb(maxSizeError(maxAppendSize));
      const stream = streamName(options.getStreamIdentifier());
      const expected = expectedOf(options);
      decideAppend(stream, expected, events, (d) => {
        const resp = new pb.AppendResp();
        if (d.kind === 'wrong_expected_version') {
          const w = new pb.AppendResp.WrongExpectedVersion();
          if (d.current < 0) w.setCurrentNoStream(new shared.Empty());
          else w.setCurrentRevision(String(d.current));
          if (expected.kind === 'revision') w.setExpectedRevision(String(expected.n));
          else if (expected.kind === 'no_stream') w.setExpectedNoStream(new shared.Empty());
          else if (expected.kind === 'stream_exists') w.setExpectedStreamExists(new shared.Empty());
          else w.setExpectedAny(new shared.Empty());
          resp.setWrongExpectedVersion(w);
        } else {
          const s = new pb.AppendResp.Success();
          const last = d.kind === 'written' ? d.records.at(-1)! : undefined;
          s.setCurrentRevision(String(last ? last.revision : (d as { revision: number }).revision));
          const p = new pb.AppendResp.Position();
          const pos = last ? last.position : (d as { position: bigint }).position;
          p.setCommitPosition(pos.toString());
          p.setPreparePosition(pos.toString());
          s.setPosition(p);
          resp.setSuccess(s);
        }
        cb(null, resp);
      });
    });
  }

  function batchAppend(call: grpc.ServerDuplexStream<pb.BatchAppendReq, pb.BatchAppendResp>) {
    const pending = new Map<string, { options: pb.BatchAppendReq.Options; events: ProposedEvent[] }>();
    call.on('error', () => {});
    call.on('data', (req: pb.BatchAppendReq) => {
      const correlation = req.getCorrelationId()?.getString() ?? '';
      const entry = pending.get(correlation) ?? { options: req.getOptions()!, events: [] };
      pending.set(correlation, entry);
      for (const m of req.getProposedMessagesList()) entry.events.push(proposed(m));
      if (!req.getIsFinal()) return;
      pending.delete(correlation);
      const stream = streamName(entry.options.getStreamIdentifier());
      const respond = (fill: (resp: pb.BatchAppendResp) => void) => {
        const resp = new pb.BatchAppendResp();
        resp.setCorrelationId(uuid(correlation));
        resp.setStreamIdentifier(identifier(stream));
        fill(resp);
        if (call.writable) call.write(resp);
      };
      const failure = (code: grpc.status, typeName: string, detail: Uint8Array) => (resp: pb.BatchAppendResp) => {
        const status = new Status();
        status.setCode(code as number as Status.AsObject['code']);
        const any = new Any();
        any.pack(detail, typeName);
        status.setDetails(any);
        resp.setError(status);
      };
      if (appendSize(entry.events) > maxAppendSize) {
        const m = new shared.MaximumAppendSizeExceeded();
        m.setMaxappendsize(maxAppendSize);
        const typeName = 'event_store.client.MaximumAppendSizeExceeded';
        return respond(failure(grpc.status.INVALID_ARGUMENT, typeName, m.serializeBinary()));
      }
      decideAppend(stream, expectedOf(entry.options), entry.events, (d) => {
        if (d.kind === 'wrong_expected_version') {
          const w = new shared.WrongExpectedVersion();
          if (d.current < 0) w.setCurrentNoStream(new shared.Empty());
          else w.setCurrentStreamRevision(String(d.current));
          const typeName = 'event_store.client.WrongExpectedVersion';
          return respond(failure(grpc.status.FAILED_PRECONDITION, typeName, w.serializeBinary()));
        }
        respond((resp) => {
          const s = new pb.BatchAppendResp.Success();
          const last = d.kind === 'written' ? d.records.at(-1)! : undefined;
          s.setCurrentRevision(String(last ? last.revision : (d as { revision: number }).revision));
          const p = new shared.AllStreamPosition();
          const pos = last ? last.position : (d as { position: bigint }).position;
          p.setCommitPosition(pos.toString());
          p.setPreparePosition(pos.toString());
          s.setPosition(p);
          resp.setSuccess(s);
        });
      });
    });
  }

  function supportedMethods(_call: unknown, cb: grpc.sendUnaryData<SupportedMethods>) {
    const methods = new SupportedMethods();
    // the version whose behaviour the stand-in follows, marked as the stand-in's
    methods.setEventStoreServerVersion(`${opts.serverVersion ?? '24.10.0'}-standin`);
    for (const name of ['Read', 'Append', 'BatchAppend']) {
      const m = new SupportedMethod();
      m.setServiceName('event_store.client.streams.Streams');
      m.setMethodName(name);
      methods.addMethods(m);
    }
    cb(null, methods);
  }

  async function listen(): Promise<void> {
    server = new grpc.Server({ 'grpc.max_concurrent_streams': 100 });
    server.addService(StreamsService, {
      read,
      append,
      batchAppend,
      delete: (_c: unknown, cb: grpc.sendUnaryData<never>) => cb(serviceError(grpc.status.UNIMPLEMENTED, 'delete')),
      tombstone: (_c: unknown, cb: grpc.sendUnaryData<never>) =>
        cb(serviceError(grpc.status.UNIMPLEMENTED, 'tombstone')),
    } as grpc.UntypedServiceImplementation);
    server.addService(ServerFeaturesService, { getSupportedMethods: supportedMethods });
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
  }

  await listen();
  let systemEvents = 0;
  return {
    get url() {
      return `esdb://127.0.0.1:${port}?tls=false`;
    },
    get port() {
      return port;
    },
    stats,
    appendSystemEvents(count) {
      const events = Array.from({ length: count }, () => ({
        id: crypto.randomUUID(),
        type: '$statsCollected',
        contentType: 'application/json',
        data: Buffer.from('{}'),
        metadata: new Uint8Array(),
      }));
      log.append(`$stats-standin-${systemEvents++}`, { kind: 'any' }, events, 0);
    },
    setAckDelay(ms) {
      ackDelayMs = ms;
    },
    rewrite(eventId, data) {
      log.rewrite(eventId, Buffer.from(data));
    },
    async restart() {
      server.forceShutdown();
      stats.openReads = 0;
      await listen();
    },
    async stop() {
      server.forceShutdown();
    },
  };
}

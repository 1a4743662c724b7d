import * as grpc from '@grpc/grpc-js';
import * as shared from '@eventstore/db-client/generated/shared_pb';
import * as pb from '@eventstore/db-client/generated/streams_pb';
import type { StoredRecord } from './log';

/** Messages of the EventStoreDB stand-in (a test double, not EventStoreDB) as the client's protos define them. */

export function streamName(id: shared.StreamIdentifier | undefined): string {
  return Buffer.from(id?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');
}

export function identifier(stream: string): shared.StreamIdentifier {
  const id = new shared.StreamIdentifier();
  id.setStreamName(Buffer.from(stream, 'utf8'));
  return id;
}

export function uuid(id: string): shared.UUID {
  const u = new shared.UUID();
  u.setString(id);
  return u;
}

export function recordedEvent(r: StoredRecord): pb.ReadResp.ReadEvent {
  const e = new pb.ReadResp.ReadEvent.RecordedEvent();
  e.setId(uuid(r.id));
  e.setStreamIdentifier(identifier(r.stream));
  e.setStreamRevision(String(r.revision));
  e.setPreparePosition(r.position.toString());
  e.setCommitPosition(r.position.toString());
  e.getMetadataMap().set('type', r.type).set('content-type', r.contentType).set('created', r.created.toString());
  e.setCustomMetadata(r.metadata);
  e.setData(r.data);
  const read = new pb.ReadResp.ReadEvent();
  read.setEvent(e);
  read.setCommitPosition(r.position.toString());
  return read;
}

/** Waits until a stream can take more, or is gone. */
export function drained(call: grpc.ServerWritableStream<pb.ReadReq, pb.ReadResp>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      for (const e of ['drain', 'cancelled', 'close', 'error']) call.off(e, done);
      resolve();
    };
    for (const e of ['drain', 'cancelled', 'close', 'error']) call.once(e, done);
  });
}

export function serviceError(
  code: grpc.status,
  details: string,
  trailers: Record<string, string> = {},
): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(trailers)) metadata.set(k, v);
  return Object.assign(new Error(details), { code, details, metadata });
}

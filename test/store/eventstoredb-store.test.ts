import { createEventStoreDbStore } from '../../src/store/eventstoredb';
import { eventStoreContract } from './contract';

// The contract against a real EventStoreDB/KurrentDB server wherever EVENTSTORE_URL points to one
// (docker compose up -d eventstore; EVENTSTORE_URL=esdb://localhost:2113?tls=false npx vitest run
// test/store/eventstoredb-store.test.ts). Without it the same contract runs against the gRPC stand-in
// only (eventstoredb-standin.test.ts).
const url = process.env.EVENTSTORE_URL;

eventStoreContract(
  'eventstoredb (real server)',
  async () => {
    const store = createEventStoreDbStore(url!);
    return { store, teardown: () => store.close() };
  },
  url ? undefined : 'EVENTSTORE_URL is not set (no EventStoreDB server on this machine)',
);

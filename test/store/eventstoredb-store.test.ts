import { randomUUID } from 'node:crypto';
import { createEventStoreDbStore } from '../../src/store/eventstoredb';
import { eventStoreContract } from './contract';

// No EventStoreDB server can run on the CI machines: the contract runs wherever EVENTSTORE_URL points
// to one (docker compose up eventstore; EVENTSTORE_URL=esdb://localhost:2113?tls=false npm test).
const url = process.env.EVENTSTORE_URL;

eventStoreContract(
  'eventstoredb',
  async () => {
    const store = createEventStoreDbStore(url!);
    void randomUUID;
    return { store, teardown: () => store.close() };
  },
  url ? undefined : 'EVENTSTORE_URL is not set (no EventStoreDB server on this machine)',
);

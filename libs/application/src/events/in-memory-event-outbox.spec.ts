import { describeEventOutboxContract, inMemoryPetstore } from '../../testing';

describeEventOutboxContract('in-memory fakes', async () => {
  const store = inMemoryPetstore();
  // Transactions run one at a time: an event is settled once committed.
  return { uow: store.uow, outbox: store.eventOutbox, log: store.eventLog, settle: async () => undefined };
});

import { describeEventOutboxContract, inMemoryPetstore } from '../../testing';

describeEventOutboxContract('in-memory fakes', async () => {
  const store = inMemoryPetstore();
  return { uow: store.uow, outbox: store.eventOutbox, log: store.eventLog };
});

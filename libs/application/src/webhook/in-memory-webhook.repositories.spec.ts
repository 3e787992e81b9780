import {
  anAccount,
  describeWebhookRepositoryContract,
  inMemoryPetstore,
  InMemoryEventLog,
  InMemoryWebhookDeliveryRepository,
  InMemoryWebhookEndpointRepository,
} from '../../testing';

describeWebhookRepositoryContract('in-memory fakes', async () => {
  const store = inMemoryPetstore();
  return {
    uow: store.uow,
    endpoints: new InMemoryWebhookEndpointRepository(store.db),
    deliveries: new InMemoryWebhookDeliveryRepository(store.db),
    newAccountId: async (role) => (await (role === 'admin' ? anAccount().admin() : anAccount()).saveIn(store)).id,
    events: new InMemoryEventLog(store.db),
    addEvent: (event) => store.uow.run(() => store.eventOutbox.add(event)),
  };
});

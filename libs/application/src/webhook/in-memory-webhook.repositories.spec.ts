import {
  anAccount,
  describeWebhookRepositoryContract,
  inMemoryPetstore,
  InMemoryEventLog,
  InMemoryWebhookDeliveryRepository,
  InMemoryWebhookEndpointRepository,
  InMemoryWebhookOutboxStore,
} from '../../testing';

describeWebhookRepositoryContract('in-memory fakes', async () => {
  const store = inMemoryPetstore();
  const outbox = new InMemoryWebhookOutboxStore(store.db);
  return {
    uow: store.uow,
    endpoints: new InMemoryWebhookEndpointRepository(store.db),
    deliveries: new InMemoryWebhookDeliveryRepository(store.db),
    newAccountId: async (role) => (await (role === 'admin' ? anAccount().admin() : anAccount()).saveIn(store)).id,
    events: new InMemoryEventLog(store.db),
    addEvent: (event) => store.uow.run(() => outbox.add(event, false)),
  };
});

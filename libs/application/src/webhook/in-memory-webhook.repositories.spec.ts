import {
  anAccount,
  describeWebhookOutboundBudgetContract,
  describeWebhookRepositoryContract,
  inMemoryPetstore,
  InMemoryEventLog,
  InMemoryWebhookDeliveryRepository,
  InMemoryWebhookEndpointRepository,
  InMemoryWebhookOutboundBudget,
} from '../../testing';
import { WebhookOutboundSettings } from './webhook.ports';

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

describeWebhookOutboundBudgetContract('in-memory fake', async () => {
  const store = inMemoryPetstore();
  return {
    uow: store.uow,
    budget: new InMemoryWebhookOutboundBudget(store.db, store.clock, new WebhookOutboundSettings(2)),
    unlimited: new InMemoryWebhookOutboundBudget(store.db, store.clock, new WebhookOutboundSettings(0)),
  };
});

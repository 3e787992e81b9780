import {
  anAccount,
  aPet,
  CountingWebhookSecrets,
  inMemoryPetstore,
  InMemoryWebhookDeliveryQueue,
  InMemoryWebhookOutboundBudget,
  InMemoryWebhookDeliveryRepository,
  InMemoryWebhookEndpointChanges,
  InMemoryWebhookEndpointRepository,
  InMemoryWebhookFanOutQueue,
  ListedWebhookUrlPolicy,
} from '../../testing';
import { SetStock } from '../stock/stock.use-cases';
import { UpdatePet } from '../pet/pet.use-cases';
import { SubscriberCache, SubscriberCacheSettings } from './subscriber-cache';
import { WebhookFanOut } from './webhook-fan-out';
import { CreateWebhookEndpoint, FanOutWebhookEvent } from './webhook.use-cases';

/** The catalogue's events (a pet renamed, restocked) reach a customer's endpoint: every account may subscribe. */
describe("webhooks of the catalogue's events (in-memory ports)", () => {
  const store = inMemoryPetstore();
  const updatePet = () => new UpdatePet(store.stockCommand);
  const setStock = () => new SetStock(store.stockCommand);

  it("a customer's endpoint may subscribe to them and receives each (a fan-out job, then a delivery)", async () => {
    const { db, uow, clock } = store;
    const endpoints = new InMemoryWebhookEndpointRepository(db);
    const changes = new InMemoryWebhookEndpointChanges(db);
    const subscribers = new SubscriberCache(endpoints, changes, clock, new SubscriberCacheSettings());
    store.eventConsumers.register(new WebhookFanOut(subscribers, new InMemoryWebhookFanOutQueue(db), store.events));
    const create = new CreateWebhookEndpoint(
      uow,
      endpoints,
      store.accounts,
      new ListedWebhookUrlPolicy(),
      new CountingWebhookSecrets(),
      clock,
      changes,
      subscribers,
    );
    const ada = await anAccount().customer().saveIn(store);
    const endpoint = await create.execute({
      owner: ada,
      url: 'https://shop.example/hooks',
      events: ['pet.updated', 'inventory.changed'],
    });
    const { pet } = await aPet().named('Rex').available().withStock(2).saveIn(store);
    await updatePet().execute({ id: pet.id, name: 'Max' });
    await setStock().execute({ petId: pet.id, quantity: 9 });
    const fanOutJobs = db.tables.webhookJobs.filter((job) => job.queue === 'fan-out');
    expect(fanOutJobs).toHaveLength(2);
    const deliveries = new InMemoryWebhookDeliveryRepository(db);
    const fanOut = new FanOutWebhookEvent(
      uow,
      store.eventOutbox,
      endpoints,
      deliveries,
      new InMemoryWebhookDeliveryQueue(db),
      clock,
      new InMemoryWebhookOutboundBudget(db, clock),
    );
    for (const job of fanOutJobs) if (job.queue === 'fan-out') expect(await fanOut.execute(job.eventId)).toBe(1);
    const delivered = await deliveries.listForEndpoint(endpoint.id, { limit: 10 });
    expect(delivered.items.map((delivery) => delivery.type).sort()).toEqual(['inventory.changed', 'pet.updated']);
  });
});

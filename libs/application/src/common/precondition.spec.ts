import { Account, Category, Order, Pet, WebhookEndpoint } from '@petstore/domain';
import {
  aCategory,
  anAccount,
  anOrder,
  aPet,
  CountingWebhookSecrets,
  inMemoryPetstore,
  InMemoryPetstore,
  InMemoryWebhookEndpointChanges,
  InMemoryWebhookEndpointRepository,
  ListedWebhookUrlPolicy,
} from '../../testing';
import { DeleteCategory, UpdateCategory } from '../category/category.use-cases';
import { CancelOrder, CompleteOrder } from '../order/order.use-cases';
import { DeletePet, UpdatePet } from '../pet/pet.use-cases';
import { SetStock } from '../stock/stock.use-cases';
import { StockLevel } from '../stock/stock-levels';
import { SubscriberCache, SubscriberCacheSettings } from '../webhook/subscriber-cache';
import { CreateWebhookEndpoint, DeleteWebhookEndpoint } from '../webhook/webhook.use-cases';
import { assertPrecondition, Precondition, PreconditionFailedError } from './precondition';

/**
 * A precondition that answers as told and records what it was asked about, and whether a transaction was open then
 * (the use case asks it under the resource's lock).
 */
class ScriptedPrecondition<T> implements Precondition<T> {
  /** `state`: the aggregate's snapshot as it was when asked (it changes afterwards), or the value itself. */
  readonly asked: Array<{ state: unknown; inTransaction: boolean }> = [];

  constructor(
    private readonly answer: boolean,
    private readonly store: InMemoryPetstore,
  ) {}

  holds(current: T): boolean {
    const snapshot = (current as { toSnapshot?: () => unknown }).toSnapshot;
    const state = snapshot ? snapshot.call(current) : structuredClone(current);
    this.asked.push({ state, inTransaction: this.store.db.inTransaction });
    return this.answer;
  }
}

describe('assertPrecondition', () => {
  it('lets everything through without a precondition, and refuses when one does not hold', () => {
    expect(() => assertPrecondition(undefined, 1)).not.toThrow();
    expect(() => assertPrecondition({ holds: (n: number) => n === 1 }, 1)).not.toThrow();
    expect(() => assertPrecondition({ holds: (n: number) => n === 1 }, 2)).toThrow(PreconditionFailedError);
    expect(new PreconditionFailedError().kind).toBe('precondition_failed');
  });
});

/**
 * Every use case that changes a resource a client can read by id takes a precondition (If-Match): asked once,
 * inside the transaction, with the resource as it stands under the lock; when it does not hold, nothing changes.
 */
describe('use cases with a precondition (in-memory ports)', () => {
  let store: InMemoryPetstore;
  let alice: Account;
  let admin: Account;
  beforeEach(async () => {
    store = inMemoryPetstore();
    alice = await anAccount().customer().saveIn(store);
    admin = await anAccount().admin().saveIn(store);
  });
  const expecting = <T>(answer: boolean) => new ScriptedPrecondition<T>(answer, store);

  describe('UpdatePet and DeletePet', () => {
    const update = () => new UpdatePet(store.stockCommand);
    const remove = () => new DeletePet(store.uow, store.pets, store.openOrders, store.events);

    it('updates when the precondition holds, asking it with the locked pet as stored', async () => {
      const { pet } = await aPet().named('Rex').available().saveIn(store);
      const precondition = expecting<Pet>(true);
      const updated = await update().execute({ id: pet.id, name: 'Max', precondition });
      expect(updated.name).toBe('Max');
      expect(precondition.asked).toHaveLength(1);
      expect(precondition.asked[0].inTransaction).toBe(true);
      expect(precondition.asked[0].state).toEqual(pet.toSnapshot());
    });

    it('refuses with PreconditionFailedError and changes nothing when it does not hold', async () => {
      const { pet } = await aPet().named('Rex').available().saveIn(store);
      const precondition = expecting<Pet>(false);
      await expect(update().execute({ id: pet.id, name: 'Max', status: 'sold', precondition })).rejects.toBeInstanceOf(
        PreconditionFailedError,
      );
      expect((await store.pets.findById(pet.id))?.toSnapshot()).toEqual(pet.toSnapshot());
      expect((await store.stocks.findByPetId(pet.id))?.quantity).toBe(1);
    });

    it('deletes only when it holds; an unknown pet is not found before any precondition is asked', async () => {
      const { pet } = await aPet().saveIn(store);
      const refusing = expecting<Pet>(false);
      await expect(remove().execute(pet.id, refusing)).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(refusing.asked).toEqual([{ state: pet.toSnapshot(), inTransaction: true }]);
      expect(await store.pets.findById(pet.id)).not.toBeNull();
      await remove().execute(pet.id, expecting<Pet>(true));
      expect(await store.pets.findById(pet.id)).toBeNull();
      const never = expecting<Pet>(true);
      await expect(remove().execute(pet.id, never)).rejects.toThrow(/not found|does not exist/i);
      expect(never.asked).toEqual([]);
    });
  });

  describe('UpdateCategory and DeleteCategory', () => {
    const update = () => new UpdateCategory(store.uow, store.categories, store.events);
    const remove = () => new DeleteCategory(store.uow, store.categories, store.events);

    it('update: asked with the locked category; refused, nothing changes', async () => {
      const category = await aCategory().named('Cats').describedAs('Independent').saveIn(store);
      const refusing = expecting<Category>(false);
      await expect(
        update().execute({ id: category.id, name: 'Felines', precondition: refusing }),
      ).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(refusing.asked.map((a) => [a.state, a.inTransaction])).toEqual([[category.toSnapshot(), true]]);
      expect((await store.categories.findById(category.id))?.name).toBe('Cats');
      await update().execute({ id: category.id, name: 'Felines', precondition: expecting<Category>(true) });
      expect((await store.categories.findById(category.id))?.name).toBe('Felines');
    });

    it('delete: refused, the category stays; holding, it goes', async () => {
      const category = await aCategory().named('Birds').saveIn(store);
      await expect(remove().execute(category.id, expecting<Category>(false))).rejects.toBeInstanceOf(
        PreconditionFailedError,
      );
      expect(await store.categories.exists(category.id)).toBe(true);
      await remove().execute(category.id, expecting<Category>(true));
      expect(await store.categories.exists(category.id)).toBe(false);
    });

    it('delete without a precondition behaves as before: a category in use is refused', async () => {
      const category = await aCategory().named('Dogs').saveIn(store);
      await aPet().inCategory(category.id).saveIn(store);
      await expect(remove().execute(category.id)).rejects.toThrow(/pets|in use/i);
      expect(await store.categories.exists(category.id)).toBe(true);
    });
  });

  describe('SetStock', () => {
    it('asks with the stock entry as GET /store/inventory/{petId} shows it; refused, the count stays', async () => {
      const { pet } = await aPet().available().withStock(3).saveIn(store);
      const refusing = expecting<StockLevel>(false);
      await expect(
        new SetStock(store.stockCommand).execute({ petId: pet.id, quantity: 0, precondition: refusing }),
      ).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(refusing.asked).toEqual([
        {
          state: { petId: pet.id, quantity: 3, status: 'available', version: expect.any(Number) },
          inTransaction: true,
        },
      ]);
      expect((await store.stocks.findByPetId(pet.id))?.quantity).toBe(3);
      expect((await store.pets.findById(pet.id))?.status).toBe('available');
      const level = await new SetStock(store.stockCommand).execute({
        petId: pet.id,
        quantity: 0,
        precondition: expecting<StockLevel>(true),
      });
      expect(level).toEqual({ petId: pet.id, quantity: 0, status: 'sold', version: expect.any(Number) });
    });
  });

  describe('CompleteOrder and CancelOrder', () => {
    it('complete: asked with the locked order; refused, the order stays open and the stock as it was', async () => {
      const { pet } = await aPet().available().withStock(2).saveIn(store);
      const order = await anOrder().forPet(pet.id).ownedBy(alice.id).ofQuantity(1).saveIn(store);
      const refusing = expecting<Order>(false);
      await expect(
        new CompleteOrder(store.uow, store.orderCommand, store.clock).execute({
          orderId: order.id,
          precondition: refusing,
        }),
      ).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(refusing.asked).toEqual([{ state: order.toSnapshot(), inTransaction: true }]);
      expect((await store.orders.findById(order.id))?.isComplete).toBe(false);
      const completed = await new CompleteOrder(store.uow, store.orderCommand, store.clock).execute({
        orderId: order.id,
        precondition: expecting<Order>(true),
      });
      expect(completed.isComplete).toBe(true);
    });

    it('cancel: refused, the order and the stock stay; holding, it is cancelled', async () => {
      const { pet } = await aPet().available().withStock(2).saveIn(store);
      const order = await anOrder().forPet(pet.id).ownedBy(alice.id).ofQuantity(1).saveIn(store);
      const cancel = new CancelOrder(store.uow, store.orderCommand, store.clock);
      await expect(
        cancel.execute({ orderId: order.id, by: alice, precondition: expecting<Order>(false) }),
      ).rejects.toBeInstanceOf(PreconditionFailedError);
      expect((await store.orders.findById(order.id))?.isOpen).toBe(true);
      expect((await store.stocks.findByPetId(pet.id))?.quantity).toBe(2);
      await cancel.execute({ orderId: order.id, by: admin, precondition: expecting<Order>(true) });
      expect((await store.stocks.findByPetId(pet.id))?.quantity).toBe(3);
    });
  });

  describe('DeleteWebhookEndpoint', () => {
    it("asked with the locked endpoint; refused, it stays; another account's is not found first", async () => {
      const endpoints = new InMemoryWebhookEndpointRepository(store.db);
      const changes = new InMemoryWebhookEndpointChanges(store.db);
      const subscribers = new SubscriberCache(endpoints, changes, store.clock, new SubscriberCacheSettings());
      const created = await new CreateWebhookEndpoint(
        store.uow,
        endpoints,
        store.accounts,
        new ListedWebhookUrlPolicy(),
        new CountingWebhookSecrets(),
        store.clock,
        changes,
        subscribers,
      ).execute({ url: 'https://hooks.example/a', events: ['order.placed'], owner: alice });
      const remove = new DeleteWebhookEndpoint(store.uow, endpoints, changes, subscribers);
      const refusing = expecting<WebhookEndpoint>(false);
      await expect(remove.execute(created.id, alice, refusing)).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(refusing.asked.map((a) => [a.state, a.inTransaction])).toEqual([[created.toSnapshot(), true]]);
      expect(await endpoints.findById(created.id)).not.toBeNull();
      const bob = await anAccount().customer().saveIn(store);
      const unseen = expecting<WebhookEndpoint>(true);
      await expect(remove.execute(created.id, bob, unseen)).rejects.toThrow(/not found|does not exist/i);
      expect(unseen.asked).toEqual([]);
      await remove.execute(created.id, alice, expecting<WebhookEndpoint>(true));
      expect(await endpoints.findById(created.id)).toBeNull();
    });
  });
});

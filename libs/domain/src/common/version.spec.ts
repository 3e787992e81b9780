import { Category } from '../category/category';
import { Message } from '../message/message';
import { Order } from '../order/order';
import { Pet } from '../pet/pet';
import { Stock } from '../stock/stock';
import { FIRST_VERSION } from './version';

const now = new Date('2030-01-01T00:00:00.000Z');

/** Each versioned aggregate, new, and how the code that stores a change advances it. */
const AGGREGATES = {
  Category: () => Category.create({ id: 1, name: 'Dogs' }),
  Pet: () => Pet.create({ id: 1, name: 'Rex', categoryId: 1, now }),
  Stock: () => Stock.forNewPet(Pet.create({ id: 1, name: 'Rex', categoryId: 1, now })),
  Order: () => Order.place({ id: 1, petId: 1, quantity: 1, ownerId: 1, now }),
  Message: () => Message.queue({ id: '3f2b8c1e-9d4a-4b7e-8c2d-1a2b3c4d5e6f', text: 'hi', ownerId: 1, now }),
};

describe('resource versions', () => {
  it.each(Object.entries(AGGREGATES))('a new %s has the first version; each stored change adds one', (_, make) => {
    const aggregate = make();
    expect(aggregate.version).toBe(FIRST_VERSION);
    aggregate.advanceVersion();
    aggregate.advanceVersion();
    expect(aggregate.version).toBe(FIRST_VERSION + 2);
    expect(aggregate.toSnapshot().version).toBe(FIRST_VERSION + 2);
  });

  it('a change of the domain alone leaves the version to the code that stores it (the database counts writes)', () => {
    const pet = AGGREGATES.Pet();
    pet.rename('Max');
    pet.hold();
    expect(pet.version).toBe(FIRST_VERSION);
    const order = AGGREGATES.Order();
    order.cancel(now);
    expect(order.version).toBe(FIRST_VERSION);
  });

  it('restore keeps the stored version', () => {
    const stored = { ...AGGREGATES.Category().toSnapshot(), version: 7 };
    expect(Category.restore(stored).version).toBe(7);
  });
});

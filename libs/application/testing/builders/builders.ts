import { Account, Category, Stock, Order, OrderProps, Pet, PetStatus, Role } from '@petstore/domain';
import { AccountRepository } from '../../src/account/account.repository';
import { CategoryRepository } from '../../src/category/category.repository';
import { StockRepository } from '../../src/stock/stock.repository';
import { OrderRepository } from '../../src/order/order.repository';
import { PetRepository } from '../../src/stock/pet.repository';

/*
 * Test-data builders: a valid default for everything, and a method per fact a test cares about
 * (`aPet().pending().withStock(0)`). `build(id)` makes the domain object, not stored, with that id
 * (1 by default); `saveIn(…)` takes an id from the repository's `nextId()` and adds the object
 * through the ports, so it works the same on the fakes and on TypeORM.
 */

let names = 0;
/** A name no other built object of this run has (category names are unique). */
const unique = (prefix: string) => `${prefix} ${++names}`;

export class CategoryBuilder {
  private name = unique('Category');
  private description: string | null = null;

  named(name: string): this {
    this.name = name;
    return this;
  }

  describedAs(description: string | null): this {
    this.description = description;
    return this;
  }

  build(id = 1): Category {
    return Category.create({ id, name: this.name, description: this.description });
  }

  async saveIn(ports: { categories: CategoryRepository }): Promise<Category> {
    const category = this.build(await ports.categories.nextId());
    await ports.categories.add(category);
    return category;
  }
}

export const aCategory = () => new CategoryBuilder();

export class PetBuilder {
  private name = unique('Pet');
  private status: PetStatus = 'available';
  private categoryId: number | undefined;
  private quantity: number | undefined;
  private createdAt = new Date('2026-01-01T00:00:00.000Z');

  named(name: string): this {
    this.name = name;
    return this;
  }

  inCategory(categoryId: number): this {
    this.categoryId = categoryId;
    return this;
  }

  available(): this {
    return this.withStatus('available');
  }

  pending(): this {
    return this.withStatus('pending');
  }

  sold(): this {
    return this.withStatus('sold');
  }

  withStatus(status: PetStatus): this {
    this.status = status;
    return this;
  }

  /** Units in stock; by default what a new pet gets (1 if available, else 0). */
  withStock(quantity: number): this {
    this.quantity = quantity;
    return this;
  }

  build(id = 1): Pet {
    return Pet.create({
      id,
      name: this.name,
      categoryId: this.categoryId ?? 1,
      status: this.status,
      now: this.createdAt,
    });
  }

  /**
   * Saves the pet and its stock entry. Without `inCategory` a new category is made for it.
   * Stock and status are written as given, so a test can start from any state, valid or not.
   */
  async saveIn(ports: {
    categories: CategoryRepository;
    pets: PetRepository;
    stocks: StockRepository;
  }): Promise<{ pet: Pet; stock: Stock }> {
    this.categoryId ??= (await aCategory().saveIn(ports)).id;
    const pet = this.build(await ports.pets.nextId());
    await ports.pets.add(pet);
    const stock = await ports.stocks.create(Stock.forNewPet(pet));
    if (this.quantity !== undefined && this.quantity !== stock.quantity) {
      stock.restock(this.quantity);
      await ports.stocks.save(stock);
      // As stored: the store counted the change.
      stock.advanceVersion();
    }
    return { pet, stock };
  }
}

export const aPet = () => new PetBuilder();

export class AccountBuilder {
  private props = {
    id: 1,
    name: unique('Account'),
    role: 'customer' as Role,
    createdAt: new Date('2026-01-01T00:00:00Z'),
  };

  withId(id: number): this {
    this.props.id = id;
    return this;
  }

  customer(): this {
    this.props.role = 'customer';
    return this;
  }

  admin(): this {
    this.props.role = 'admin';
    return this;
  }

  build(): Account {
    return Account.restore(this.props);
  }

  /** Stores the account under a new id from the sequence (a preset `withId` is not kept). */
  async saveIn(ports: { accounts: AccountRepository }): Promise<Account> {
    const account = Account.restore({ ...this.props, id: await ports.accounts.nextId() });
    await ports.accounts.add(account);
    return account;
  }
}

/** An account as the use cases receive it (already authenticated): id 1 unless `withId`; `saveIn` to store one. */
export const anAccount = () => new AccountBuilder().withId(1);

export class OrderBuilder {
  private props: OrderProps = {
    id: 1,
    petId: 1,
    quantity: 1,
    shipDate: null,
    status: 'placed',
    createdAt: new Date('2026-01-01T00:00:00Z'),
    statusChangedAt: new Date('2026-01-01T00:00:00Z'),
    version: 1,
    ownerId: 1,
  };

  forPet(petId: number): this {
    this.props.petId = petId;
    return this;
  }

  ofQuantity(quantity: number): this {
    this.props.quantity = quantity;
    return this;
  }

  ownedBy(ownerId: number): this {
    this.props.ownerId = ownerId;
    return this;
  }

  shipping(shipDate: Date | null): this {
    this.props.shipDate = shipDate;
    return this;
  }

  completed(): this {
    this.props.status = 'completed';
    return this;
  }

  /** Cancelled (or, with `expired`, withdrawn by the hold expiry). */
  cancelled(how: 'cancelled' | 'expired' = 'cancelled'): this {
    this.props.status = how;
    return this;
  }

  placedAt(createdAt: Date): this {
    this.props.createdAt = createdAt;
    this.props.statusChangedAt = createdAt;
    return this;
  }

  build(id = this.props.id): Order {
    return Order.restore({ ...this.props, id });
  }

  /**
   * Stores the order as it is, under a new id (no stock moves: give the pet the stock the test
   * means it to have left).
   */
  async saveIn(ports: { orders: OrderRepository }): Promise<Order> {
    const order = this.build(await ports.orders.nextId());
    await ports.orders.add(order);
    return order;
  }
}

export const anOrder = () => new OrderBuilder();

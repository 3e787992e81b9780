import fc from 'fast-check';
import { DomainError } from '../common/domain-error';
import { Order } from '../order/order';
import { Pet } from '../pet/pet';
import { PET_STATUSES, PetStatus } from '../pet/pet-status';
import { Stock } from './stock';
import { StockRules } from './stock-rules';

/**
 * Invariants I1–I5 of docs/domain.md over random command sequences on one pet, the way the use
 * cases drive the rules: each command sees the aggregates as the previous one left them.
 */

type Command =
  | { kind: 'place'; quantity: number }
  | { kind: 'complete'; pick: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'setStock'; quantity: number }
  | { kind: 'hand'; to: PetStatus };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('place' as const),
      quantity: fc.integer({ min: 1, max: 3 }),
    }),
    weight: 2,
  },
  fc.record({ kind: fc.constant('complete' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('setStock' as const), quantity: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ kind: fc.constant('hand' as const), to: fc.constantFrom(...PET_STATUSES) }),
);

/** Which refusals each command may meet; anything else is a bug. */
const ALLOWED_REFUSALS: Record<Command['kind'], string[]> = {
  place: ['pet_not_available', 'insufficient_stock'],
  complete: ['order_already_complete'],
  cancel: ['order_already_complete'],
  setStock: [],
  hand: ['invalid_status_transition'],
};

const at = new Date('2030-06-15T12:00:00.000Z');

class World {
  readonly pet: Pet;
  readonly stock: Stock;
  /** Orders not cancelled (a cancelled order is deleted). */
  orders: Order[] = [];
  /** Units stocked so far, net of what administrators wrote off (stock set lower, `→ sold`). */
  stocked: number;
  readonly everCompleted = new Set<Order>();

  constructor(status: PetStatus) {
    const created = Pet.create({
      id: 7,
      name: 'Batch',
      categoryId: 1,
      status,
      now: new Date('2030-01-01T00:00:00.000Z'),
    });
    this.pet = Pet.restore({ ...created.toSnapshot(), id: 7 });
    this.stock = Stock.forNewPet(this.pet);
    this.stocked = this.stock.quantity;
  }

  get openOrders(): Order[] {
    return this.orders.filter((o) => o.isOpen);
  }

  state() {
    return {
      pet: this.pet.toSnapshot(),
      stock: this.stock.toSnapshot(),
      orders: this.orders.map((o) => ({ ...o.toSnapshot(), open: o.isOpen })),
    };
  }

  run(cmd: Command): void {
    const statusBefore = this.pet.status;
    const quantityBefore = this.stock.quantity;
    const before = this.state();
    try {
      this.apply(cmd);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      expect(ALLOWED_REFUSALS[cmd.kind]).toContain(error.kind);
      expect(this.state()).toEqual(before); // a refusal changes nothing
      if (cmd.kind === 'place' && error.kind === 'insufficient_stock') {
        expect(quantityBefore).toBeLessThan(cmd.quantity);
      }
      return;
    }
    if (cmd.kind === 'place') {
      expect(statusBefore).toBe('available'); // I2: orders only for available pets
    }
    if (cmd.kind === 'setStock') this.stocked += cmd.quantity - quantityBefore;
    if (cmd.kind === 'hand' && cmd.to === 'sold') this.stocked -= quantityBefore;
  }

  private apply(cmd: Command): void {
    const { pet, stock } = this;
    switch (cmd.kind) {
      case 'place':
        this.orders.push(
          StockRules.placeOrder({
            orderId: this.orders.length + 1,
            pet,
            stock,
            quantity: cmd.quantity,
            ownerId: 1,
            now: at,
          }),
        );
        return;
      case 'complete': {
        const order = this.pick(cmd.pick);
        if (!order) return;
        const otherOpenOrders = this.openOrders.filter((o) => o !== order).length;
        StockRules.completeOrder({ order, pet, stock, otherOpenOrders, at });
        this.everCompleted.add(order);
        return;
      }
      case 'cancel': {
        const order = this.pick(cmd.pick);
        if (!order) return;
        StockRules.cancelOrder({ order, pet, stock, at: new Date('2030-01-01T00:00:00.000Z') });
        this.orders = this.orders.filter((o) => o !== order);
        return;
      }
      case 'setStock':
        StockRules.setStock({
          pet,
          stock,
          quantity: cmd.quantity,
          openOrders: this.openOrders.length,
        });
        return;
      case 'hand':
        StockRules.changeStatusByHand({
          pet,
          stock,
          to: cmd.to,
          openOrders: this.openOrders.length,
        });
        return;
    }
  }

  private pick(n: number): Order | undefined {
    return this.orders.length ? this.orders[n % this.orders.length] : undefined;
  }

  checkInvariants(): void {
    const quantity = this.stock.quantity;
    const open = this.openOrders;
    // I1: never below 0
    expect(Number.isInteger(quantity)).toBe(true);
    expect(quantity).toBeGreaterThanOrEqual(0);
    // I3: sold ⇒ nothing in stock and no open order
    if (this.pet.isSold) {
      expect(quantity).toBe(0);
      expect(open).toHaveLength(0);
    }
    // I4: every unit stocked is in stock, in an open order or in a completed order
    const inOrders = this.orders.reduce((sum, o) => sum + o.quantity, 0);
    expect(quantity + inOrders).toBe(this.stocked);
    // I5: a completed order stays completed
    for (const order of this.everCompleted) {
      expect(order.isComplete).toBe(true);
      expect(this.orders).toContain(order);
    }
    // Follows from the tables: an available pet always has a unit to sell.
    if (this.pet.isAvailable) expect(quantity).toBeGreaterThan(0);
  }
}

describe('StockRules: invariants over random command sequences', () => {
  it('I1–I5 hold after every command, and refusals change nothing', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PET_STATUSES),
        fc.array(command, { maxLength: 60, size: 'max' }),
        (status, commands) => {
          const world = new World(status);
          world.checkInvariants();
          for (const cmd of commands) {
            world.run(cmd);
            world.checkInvariants();
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the sequences reach every status and both kinds of outcome (the property is not vacuous)', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.array(command, { minLength: 10, maxLength: 60, size: 'max' }), (commands) => {
        const world = new World('available');
        for (const cmd of commands) {
          const before = JSON.stringify(world.state());
          if (cmd.kind === 'complete' && world.pet.isPending && world.stock.isEmpty && world.openOrders.length > 1) {
            seen.add('complete with other open orders on an emptied pending pet');
          }
          world.run(cmd);
          seen.add(world.pet.status);
          seen.add(`${cmd.kind}:${JSON.stringify(world.state()) === before ? 'unchanged' : 'changed'}`);
        }
      }),
      { numRuns: 200, seed: 42 },
    );
    for (const expected of [
      'available',
      'pending',
      'sold',
      'place:changed',
      'place:unchanged',
      'complete:changed',
      'complete:unchanged',
      'cancel:changed',
      'setStock:changed',
      'hand:changed',
      'hand:unchanged',
      'complete with other open orders on an emptied pending pet',
    ]) {
      expect(seen).toContain(expected);
    }
  });

  it('cancelling an order undoes placing it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 50 }), (units, quantity) => {
        fc.pre(quantity <= units);
        const pet = Pet.restore({
          id: 7,
          name: 'Batch',
          categoryId: 1,
          status: 'available',
          createdAt: new Date('2030-01-01T00:00:00.000Z'),
          version: 1,
        });
        const stock = Stock.restore({ petId: 7, quantity: units, version: 1 });
        const order = StockRules.placeOrder({ orderId: 1, pet, stock, quantity, ownerId: 1, now: at });
        expect(stock.quantity).toBe(units - quantity);
        StockRules.cancelOrder({ order, pet, stock, at });
        expect(stock.quantity).toBe(units);
        expect(pet.status).toBe('available');
      }),
    );
  });

  it('two orders for more units than are left: the second is refused, no overselling (I1)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 20 }),
        fc.integer({ min: 1, max: 19 }),
        fc.integer({ min: 1, max: 20 }),
        (units, first, extra) => {
          fc.pre(first < units);
          const pet = Pet.restore({
            id: 7,
            name: 'Batch',
            categoryId: 1,
            status: 'available',
            createdAt: new Date('2030-01-01T00:00:00.000Z'),
            version: 1,
          });
          const stock = Stock.restore({ petId: 7, quantity: units, version: 1 });
          StockRules.placeOrder({ orderId: 1, pet, stock, quantity: first, ownerId: 1, now: at });
          const second = units - first + extra;
          expect(() =>
            StockRules.placeOrder({ orderId: 2, pet, stock, quantity: second, ownerId: 2, now: at }),
          ).toThrow(expect.objectContaining({ kind: 'insufficient_stock' }));
          expect(stock.quantity).toBe(units - first);
          expect(pet.status).toBe('available');
        },
      ),
    );
  });

  it('after the last unit is ordered, the next order finds the pet pending (pet_not_available)', () => {
    const pet = Pet.restore({
      id: 7,
      name: 'Rex',
      categoryId: 1,
      status: 'available',
      createdAt: new Date('2030-01-01T00:00:00.000Z'),
      version: 1,
    });
    const stock = Stock.restore({ petId: 7, quantity: 1, version: 1 });
    StockRules.placeOrder({ orderId: 1, pet, stock, quantity: 1, ownerId: 1, now: at });
    expect(() => StockRules.placeOrder({ orderId: 2, pet, stock, quantity: 1, ownerId: 2, now: at })).toThrow(
      expect.objectContaining({ kind: 'pet_not_available' }),
    );
    expect([stock.quantity, pet.status]).toEqual([0, 'pending']);
  });
});

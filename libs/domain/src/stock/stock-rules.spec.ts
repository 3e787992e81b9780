import { DomainError } from '../common/domain-error';
import { LIMITS } from '../common/limits';
import { Order } from '../order/order';
import { Pet } from '../pet/pet';
import { PET_STATUSES, PetStatus } from '../pet/pet-status';
import { Stock } from './stock';
import { StockRules } from './stock-rules';
import { caught } from '../../test-support/caught';

const PET_ID = 7;
const now = new Date('2030-06-15T12:00:00.000Z');

/** A pet with its stock, as the use case would load them. */
function petWith(status: PetStatus, quantity: number) {
  return {
    pet: Pet.restore({
      id: PET_ID,
      name: 'Rex',
      categoryId: 1,
      status,
      createdAt: new Date('2030-01-01T00:00:00.000Z'),
      version: 1,
    }),
    stock: Stock.restore({ petId: PET_ID, quantity, version: 1 }),
  };
}

const placedAt = new Date('2030-01-01T00:00:00.000Z');
const cancelledAt = new Date('2030-01-01T00:10:00.000Z');
const openOrder = (quantity: number, complete = false) =>
  Order.restore({
    id: 21,
    petId: PET_ID,
    quantity,
    shipDate: null,
    status: complete ? 'completed' : 'placed',
    createdAt: placedAt,
    statusChangedAt: placedAt,
    ownerId: 11,
    version: 1,
  });

/** Run a command that must be refused; check its kind and that nothing changed. */
function expectRefused(
  kind: string,
  aggregates: { pet: Pet; stock: Stock; order?: Order },
  command: () => unknown,
): void {
  const before = {
    pet: aggregates.pet.toSnapshot(),
    stock: aggregates.stock.toSnapshot(),
    order: aggregates.order?.toSnapshot(),
    orderOpen: aggregates.order?.isOpen,
  };
  const error = caught(command);
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).kind).toBe(kind);
  expect({
    pet: aggregates.pet.toSnapshot(),
    stock: aggregates.stock.toSnapshot(),
    order: aggregates.order?.toSnapshot(),
    orderOpen: aggregates.order?.isOpen,
  }).toEqual(before);
}

describe('StockRules.placeOrder (command table: place order)', () => {
  it.each([
    // status, stock, q → stock after, status after
    ['available', 3, 1, 2, 'available'],
    ['available', 3, 2, 1, 'available'],
    ['available', 3, 3, 0, 'pending'],
    ['available', 1, 1, 0, 'pending'],
    ['available', 1000, 1000, 0, 'pending'],
  ] as const)('%s pet with %i in units, %i ordered → units %i, pet %s', (status, units, q, left, after) => {
    const { pet, stock } = petWith(status, units);
    const order = StockRules.placeOrder({ orderId: 21, pet, stock, quantity: q, ownerId: 11, now });
    expect(order.toSnapshot()).toEqual({
      id: 21,
      petId: PET_ID,
      quantity: q,
      shipDate: null,
      status: 'placed',
      createdAt: now,
      statusChangedAt: now,
      ownerId: 11,
      version: 1,
    });
    expect(order.isOpen).toBe(true);
    expect(stock.quantity).toBe(left);
    expect(pet.status).toBe(after);
  });

  it('keeps the ship date given', () => {
    const { pet, stock } = petWith('available', 2);
    const shipDate = new Date('2030-06-20T00:00:00.000Z');
    expect(
      StockRules.placeOrder({ orderId: 21, pet, stock, quantity: 1, shipDate, ownerId: 11, now }).shipDate,
    ).toEqual(shipDate);
  });

  it.each([
    ['pending', 5, 1, 'pet_not_available'],
    ['sold', 0, 1, 'pet_not_available'],
    ['pending', 0, 1, 'pet_not_available'],
    ['available', 2, 3, 'insufficient_stock'],
    ['available', 0, 1, 'insufficient_stock'],
  ] as const)('%s pet with %i in units, %i ordered → %s, nothing changes', (status, units, q, code) => {
    const aggregates = petWith(status, units);
    expectRefused(code, aggregates, () =>
      StockRules.placeOrder({ orderId: 21, ...aggregates, quantity: q, ownerId: 11, now }),
    );
  });

  it.each([
    ['quantity 0', { quantity: 0 }],
    ['quantity above the order limit', { quantity: LIMITS.orderQuantity.max + 1 }],
    ['a ship date two days ago', { quantity: 1, shipDate: new Date('2030-06-13T12:00:00.000Z') }],
  ])('validates the input (%s) before the state: invalid even for a sold pet', (_, input) => {
    const aggregates = petWith('sold', 0);
    expectRefused('invalid', aggregates, () =>
      StockRules.placeOrder({ orderId: 21, ...aggregates, ...input, ownerId: 11, now }),
    );
  });
});

describe('StockRules.completeOrder (command table: complete order)', () => {
  const at = new Date('2030-06-16T08:00:00.000Z');

  it.each([
    // status, stock, other open orders → status after
    ['pending', 0, 0, 'sold'],
    ['pending', 0, 1, 'pending'],
    ['pending', 0, 4, 'pending'],
    ['pending', 2, 0, 'pending'],
    ['available', 2, 0, 'available'],
    ['available', 2, 1, 'available'],
  ] as const)('%s pet, stock %i, %i other open orders → pet %s, stock unchanged', (status, units, others, after) => {
    const { pet, stock } = petWith(status, units);
    const order = openOrder(2);
    StockRules.completeOrder({ order, pet, stock, otherOpenOrders: others, at });
    expect(order.isComplete).toBe(true);
    expect(order.shipDate).toEqual(at);
    expect(stock.quantity).toBe(units);
    expect(pet.status).toBe(after);
  });

  it('uses the ship date given', () => {
    const { pet, stock } = petWith('pending', 0);
    const order = openOrder(1);
    const shipDate = new Date('2030-06-15T00:00:00.000Z');
    StockRules.completeOrder({ order, pet, stock, otherOpenOrders: 0, at, shipDate });
    expect(order.shipDate).toEqual(shipDate);
  });

  it('refuses a completed order with order_already_complete; the pet is not sold', () => {
    const aggregates = { ...petWith('pending', 0), order: openOrder(1, true) };
    expectRefused('order_already_complete', aggregates, () =>
      StockRules.completeOrder({ ...aggregates, otherOpenOrders: 0, at }),
    );
  });
});

describe('StockRules.cancelOrder (command table: cancel order)', () => {
  it.each([
    // status, stock, q → stock after, status after
    ['pending', 0, 3, 3, 'available'],
    ['pending', 2, 1, 3, 'available'],
    ['available', 4, 2, 6, 'available'],
  ] as const)('%s pet, stock %i, order of %i → stock %i, pet %s', (status, units, q, left, after) => {
    const { pet, stock } = petWith(status, units);
    const order = openOrder(q);
    StockRules.cancelOrder({ order, pet, stock, at: cancelledAt });
    expect(order.isCancelled).toBe(true);
    expect(order.toSnapshot()).toMatchObject({ status: 'cancelled', statusChangedAt: cancelledAt });
    expect(order.isOpen).toBe(false);
    expect(stock.quantity).toBe(left);
    expect(pet.status).toBe(after);
  });

  it('refuses a completed order with order_already_complete; no unit comes back (I4, I5)', () => {
    const aggregates = { ...petWith('sold', 0), order: openOrder(2, true), at: cancelledAt };
    expectRefused('order_already_complete', aggregates, () => StockRules.cancelOrder(aggregates));
  });

  it('expires an order as it cancels one, and refuses the second withdrawal: the units come back once', () => {
    const { pet, stock } = petWith('pending', 0);
    const order = openOrder(2);
    StockRules.cancelOrder({ order, pet, stock, at: cancelledAt, how: 'expired' });
    expect([order.status, stock.quantity, pet.status]).toEqual(['expired', 2, 'available']);
    const again = { pet, stock, order, at: cancelledAt };
    expectRefused('order_already_cancelled', again, () => StockRules.cancelOrder(again));
  });

  it('refuses to lift the stock past its limit, changing nothing', () => {
    const aggregates = { ...petWith('available', LIMITS.stockQuantity.max), order: openOrder(1), at: cancelledAt };
    expectRefused('stock_limit_exceeded', aggregates, () => StockRules.cancelOrder(aggregates));
  });
});

describe("StockRules.reserve, release, fulfil (the stock's side alone: the catalogue's, for ordering)", () => {
  it.each([
    // status, stock, q → stock after, status after
    ['available', 3, 2, 1, 'available'],
    ['available', 3, 3, 0, 'pending'],
  ] as const)('reserve: %s pet with %i in units, %i reserved → units %i, pet %s', (status, units, q, left, after) => {
    const { pet, stock } = petWith(status, units);
    StockRules.reserve({ pet, stock, quantity: q });
    expect([stock.quantity, pet.status]).toEqual([left, after]);
  });

  it.each([
    ['pending', 5, 1, 'pet_not_available'],
    ['available', 2, 3, 'insufficient_stock'],
  ] as const)('reserve: %s pet with %i in units, %i reserved → %s, nothing changes', (status, units, q, code) => {
    const aggregates = petWith(status, units);
    expectRefused(code, aggregates, () => StockRules.reserve({ ...aggregates, quantity: q }));
  });

  it('release: the units come back and a pending pet turns available; past the limit nothing changes', () => {
    const { pet, stock } = petWith('pending', 0);
    StockRules.release({ pet, stock, quantity: 2 });
    expect([stock.quantity, pet.status]).toEqual([2, 'available']);
    const full = petWith('available', LIMITS.stockQuantity.max);
    expectRefused('stock_limit_exceeded', full, () => StockRules.release({ ...full, quantity: 1 }));
  });

  it.each([
    // status, stock, other open orders → status after
    ['pending', 0, 0, 'sold'],
    ['pending', 0, 1, 'pending'],
    ['pending', 2, 0, 'pending'],
    ['available', 2, 0, 'available'],
  ] as const)(
    'fulfil: %s pet, stock %i, %i other open orders → pet %s, stock unchanged',
    (status, units, others, after) => {
      const { pet, stock } = petWith(status, units);
      StockRules.fulfil({ pet, stock, otherOpenOrders: others });
      expect([stock.quantity, pet.status]).toEqual([units, after]);
    },
  );
});

describe('StockRules.setStock (command table: set stock to n)', () => {
  it.each([
    // status, stock, n, open orders → status after
    ['available', 1, 5, 0, 'available'],
    ['available', 1, 5, 2, 'available'],
    ['pending', 0, 5, 0, 'available'],
    ['pending', 0, 1, 3, 'available'],
    ['sold', 0, 5, 0, 'available'],
    ['available', 3, 0, 1, 'pending'],
    ['available', 3, 0, 0, 'sold'],
    ['pending', 0, 0, 0, 'pending'],
    ['pending', 2, 0, 0, 'pending'],
    ['pending', 0, 0, 2, 'pending'],
    ['sold', 0, 0, 0, 'sold'],
  ] as const)('%s pet, stock %i, set to %i with %i open orders → pet %s', (status, units, n, open, after) => {
    const { pet, stock } = petWith(status, units);
    StockRules.setStock({ pet, stock, quantity: n, openOrders: open });
    expect(stock.quantity).toBe(n);
    expect(pet.status).toBe(after);
  });

  it('accepts the largest stock', () => {
    const { pet, stock } = petWith('sold', 0);
    StockRules.setStock({ pet, stock, quantity: LIMITS.stockQuantity.max, openOrders: 0 });
    expect([stock.quantity, pet.status]).toEqual([LIMITS.stockQuantity.max, 'available']);
  });

  it.each([-1, LIMITS.stockQuantity.max + 1, 1.5])('refuses %p with invalid, changing nothing', (n) => {
    const aggregates = petWith('available', 3);
    expectRefused('invalid', aggregates, () => StockRules.setStock({ ...aggregates, quantity: n, openOrders: 0 }));
  });
});

/** The hand-change table of docs/domain.md, each cell with each side of its condition. */
describe('StockRules.changeStatusByHand (hand-change table)', () => {
  type Row = [
    from: PetStatus,
    to: PetStatus,
    stock: number,
    open: number,
    result: { status: PetStatus; stock: number } | string,
  ];
  const table: Row[] = [
    ['available', 'available', 3, 1, { status: 'available', stock: 3 }], // no-op
    ['available', 'pending', 3, 0, { status: 'pending', stock: 3 }], // a hold
    ['available', 'pending', 3, 2, { status: 'pending', stock: 3 }],
    ['available', 'sold', 3, 0, { status: 'sold', stock: 0 }], // → sold empties the stock
    ['available', 'sold', 3, 1, 'invalid_status_transition'],
    ['pending', 'available', 2, 0, { status: 'available', stock: 2 }],
    ['pending', 'available', 2, 1, { status: 'available', stock: 2 }],
    ['pending', 'available', 0, 0, 'invalid_status_transition'],
    ['pending', 'pending', 2, 1, { status: 'pending', stock: 2 }], // no-op
    ['pending', 'sold', 0, 0, { status: 'sold', stock: 0 }],
    ['pending', 'sold', 4, 0, { status: 'sold', stock: 0 }],
    ['pending', 'sold', 0, 1, 'invalid_status_transition'],
    // only reachable from restored data: sold ⇒ stock 0 (I3)
    ['sold', 'available', 2, 0, { status: 'available', stock: 2 }],
    ['sold', 'available', 0, 0, 'invalid_status_transition'],
    ['sold', 'pending', 0, 0, 'invalid_status_transition'],
    ['sold', 'pending', 2, 0, 'invalid_status_transition'],
    ['sold', 'sold', 0, 0, { status: 'sold', stock: 0 }], // no-op
  ];

  it.each(table)('%s → %s (stock %i, open orders %i) → %p', (from, to, units, open, result) => {
    const aggregates = petWith(from, units);
    if (typeof result === 'string') {
      expectRefused(result, aggregates, () => StockRules.changeStatusByHand({ ...aggregates, to, openOrders: open }));
    } else {
      StockRules.changeStatusByHand({ ...aggregates, to, openOrders: open });
      expect({ status: aggregates.pet.status, stock: aggregates.stock.quantity }).toEqual(result);
    }
  });

  it('covers all nine cells', () => {
    expect(new Set(table.map(([from, to]) => `${from}>${to}`)).size).toBe(PET_STATUSES.length ** 2);
  });

  it('same → same leaves a (restored, inconsistent) stock alone: a no-op touches nothing', () => {
    const { pet, stock } = petWith('sold', 2);
    StockRules.changeStatusByHand({ pet, stock, to: 'sold', openOrders: 0 });
    expect(stock.quantity).toBe(2);
  });
});

describe('StockRules wiring checks', () => {
  it('refuses the stock of another pet (a bug, not a domain refusal)', () => {
    const { pet } = petWith('available', 1);
    const stock = Stock.restore({ petId: PET_ID + 1, quantity: 1, version: 1 });
    const error = caught(() => StockRules.setStock({ pet, stock, quantity: 3, openOrders: 0 }));
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(DomainError);
    expect(stock.quantity).toBe(1);
  });

  it('refuses an order of another pet', () => {
    const { pet, stock } = petWith('pending', 0);
    const order = Order.restore({
      id: 1,
      petId: PET_ID + 1,
      quantity: 1,
      shipDate: null,
      status: 'placed',
      createdAt: placedAt,
      statusChangedAt: placedAt,
      ownerId: 1,
      version: 1,
    });
    expect(() => StockRules.cancelOrder({ order, pet, stock, at: cancelledAt })).toThrow(/used for pet/);
    expect(order.isOpen).toBe(true);
  });

  it.each([-1, 0.5, Number.NaN])('refuses an open-order count of %p', (count) => {
    const { pet, stock } = petWith('available', 1);
    expect(() => StockRules.setStock({ pet, stock, quantity: 0, openOrders: count })).toThrow(/count/);
    expect(() => StockRules.changeStatusByHand({ pet, stock, to: 'sold', openOrders: count })).toThrow(/count/);
    expect(() =>
      StockRules.completeOrder({
        order: openOrder(1),
        pet,
        stock,
        otherOpenOrders: count,
        at: now,
      }),
    ).toThrow(/count/);
    expect([pet.status, stock.quantity]).toEqual(['available', 1]);
  });
});

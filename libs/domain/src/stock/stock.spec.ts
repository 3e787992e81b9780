import { DomainError, InvalidValueError } from '../common/domain-error';
import { LIMITS } from '../common/limits';
import { Pet } from '../pet/pet';
import { PET_STATUSES } from '../pet/pet-status';
import { Stock } from './stock';
import { InsufficientStockError, StockLimitExceededError } from './stock.errors';
import { caught } from '../../test-support/caught';

const MAX = LIMITS.stockQuantity.max;
const stock = (quantity: number, petId = 7) => Stock.restore({ petId, quantity, version: 1 });

describe('Stock.forNewPet (command table: create pet)', () => {
  it.each([
    ['available', 1],
    ['pending', 0],
    ['sold', 0],
  ] as const)('a pet created %s starts with %i unit(s)', (status, quantity) => {
    const pet = Pet.restore({
      id: 5,
      name: 'Rex',
      categoryId: 1,
      status,
      createdAt: new Date('2030-01-01T00:00:00.000Z'),
      version: 1,
    });
    expect(Stock.forNewPet(pet).toSnapshot()).toEqual({ petId: 5, quantity, version: 1 });
    expect(Stock.initialQuantityFor(status)).toBe(quantity);
  });

  it('a pet created without a status (available) starts with 1 unit', () => {
    const pet = Pet.create({ id: 1, name: 'Rex', categoryId: 1, now: new Date('2030-01-01T00:00:00.000Z') });
    expect(Stock.forNewPet(pet).quantity).toBe(1);
  });

  it('covers every status', () => {
    expect(PET_STATUSES.map((s) => Stock.initialQuantityFor(s))).toEqual([1, 0, 0]);
  });
});

describe('Stock', () => {
  it('restore copies the props; the snapshot is a copy', () => {
    const props = { petId: 3, quantity: 4, version: 2 };
    const item = Stock.restore(props);
    props.quantity = 99;
    item.toSnapshot().quantity = 42;
    expect(item.toSnapshot()).toEqual({ petId: 3, quantity: 4, version: 2 });
    expect(item.petId).toBe(3);
  });

  it.each([
    [0, true],
    [1, false],
  ])('with %i units isEmpty is %p', (quantity, empty) => {
    expect(stock(quantity).isEmpty).toBe(empty);
  });

  describe('take', () => {
    it.each([
      [5, 1, 4],
      [5, 5, 0],
      [MAX, MAX, 0],
    ])('from %i takes %i, leaving %i', (from, units, left) => {
      const item = stock(from);
      item.take(units);
      expect(item.quantity).toBe(left);
    });

    it.each([
      [0, 1],
      [2, 3],
    ])('from %i refuses %i with insufficient_stock and changes nothing (I1)', (from, units) => {
      const item = stock(from);
      const error = caught(() => item.take(units));
      expect(error).toBeInstanceOf(InsufficientStockError);
      expect(error).toMatchObject({
        kind: 'insufficient_stock',
        petId: 7,
        requested: units,
        inStock: from,
      });
      expect(item.quantity).toBe(from);
    });

    it.each([0, -1, 1.5, Number.NaN])('refuses %p units as invalid', (units) => {
      const item = stock(5);
      expect(caught(() => item.take(units))).toMatchObject({
        field: 'quantity',
        kind: 'invalid',
      });
      expect(item.quantity).toBe(5);
    });
  });

  describe('giveBack', () => {
    it('adds the units', () => {
      const item = stock(2);
      item.giveBack(3);
      expect(item.quantity).toBe(5);
    });

    it('may reach the limit exactly', () => {
      const item = stock(MAX - 3);
      item.giveBack(3);
      expect(item.quantity).toBe(MAX);
    });

    it('refuses to pass the limit with stock_limit_exceeded and changes nothing', () => {
      const item = stock(MAX - 2);
      const error = caught(() => item.giveBack(3));
      expect(error).toBeInstanceOf(StockLimitExceededError);
      expect(error).toMatchObject({
        kind: 'stock_limit_exceeded',
        quantity: MAX + 1,
        limit: MAX,
      });
      expect(item.quantity).toBe(MAX - 2);
    });

    it.each([0, -2, 0.5])('refuses %p units as invalid', (units) => {
      const item = stock(5);
      expect(() => item.giveBack(units)).toThrow(InvalidValueError);
      expect(item.quantity).toBe(5);
    });
  });

  describe('restock (an absolute count)', () => {
    it.each([0, 1, 3, MAX])('sets the stock to %i', (quantity) => {
      const item = stock(5);
      item.restock(quantity);
      expect(item.quantity).toBe(quantity);
    });

    it.each([-1, MAX + 1, 2.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses %p', (quantity) => {
      const item = stock(5);
      const error = caught(() => item.restock(quantity));
      expect(error).toBeInstanceOf(InvalidValueError);
      expect(error).toMatchObject({ field: 'quantity', kind: 'invalid' });
      expect(item.quantity).toBe(5);
    });
  });

  it('clear empties the stock', () => {
    const item = stock(9);
    item.clear();
    expect(item.quantity).toBe(0);
  });
});

describe('stock errors', () => {
  it.each([
    [new InsufficientStockError(4, 3, 1), 'insufficient_stock', 'Pet 4 has 1 unit in stock; 3 requested.'],
    [new InsufficientStockError(4, 3, 0), 'insufficient_stock', 'Pet 4 has 0 units in stock; 3 requested.'],
    [
      new StockLimitExceededError(4, MAX + 1, MAX),
      'stock_limit_exceeded',
      `Pet 4's stock cannot exceed ${MAX}; it would be ${MAX + 1}. Lower the stock first.`,
    ],
  ])('%p has kind %s', (error, kind, message) => {
    expect(error).toBeInstanceOf(DomainError);
    expect(error.kind).toBe(kind);
    expect(error.message).toBe(message);
  });
});

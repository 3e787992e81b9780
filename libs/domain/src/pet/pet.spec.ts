import { DomainError, InvalidValueError } from '../common/domain-error';
import { LIMITS } from '../common/limits';
import { Pet, PetProps } from './pet';
import {
  InvalidStatusTransitionError,
  PetHasOpenOrdersError,
  PetNotAvailableError,
  PetNotFoundError,
  UnknownPetError,
} from './pet.errors';
import { isPetStatus, PET_STATUSES, PetStatus } from './pet-status';
import { caught } from '../../test-support/caught';

const created = new Date('2030-01-01T00:00:00.000Z');
const aPet = (overrides: Partial<PetProps> = {}): Pet =>
  Pet.restore({ id: 7, name: 'Rex', categoryId: 3, status: 'available', createdAt: created, version: 1, ...overrides });

describe('PetStatus', () => {
  it('has exactly the three spec values', () => {
    expect(PET_STATUSES).toEqual(['available', 'pending', 'sold']);
  });

  it.each([
    ['available', true],
    ['pending', true],
    ['sold', true],
    ['Available', false],
    ['', false],
    ['deleted', false],
    [undefined, false],
    [1, false],
  ])('isPetStatus(%p) is %p', (value, expected) => {
    expect(isPetStatus(value)).toBe(expected);
  });
});

describe('Pet.create', () => {
  it('defaults to available, with the id it is given', () => {
    expect(Pet.create({ id: 5, name: 'Rex', categoryId: 3, now: created }).toSnapshot()).toEqual({
      id: 5,
      name: 'Rex',
      categoryId: 3,
      status: 'available',
      createdAt: created,
      version: 1,
    });
  });

  it.each(PET_STATUSES)('keeps a given status %s', (status) => {
    expect(Pet.create({ id: 5, name: 'Rex', categoryId: 3, status, now: created }).status).toBe(status);
  });

  it('trims the name', () => {
    expect(Pet.create({ id: 5, name: '  Rex  ', categoryId: 3, now: created }).name).toBe('Rex');
  });

  it.each([
    ['1 character', 'a'],
    [`${LIMITS.petName.max} characters`, 'a'.repeat(LIMITS.petName.max)],
    [`${LIMITS.petName.max} characters once trimmed`, ` ${'a'.repeat(LIMITS.petName.max)} `],
  ])('accepts a name of %s', (_, name) => {
    expect(Pet.create({ id: 5, name, categoryId: 3, now: created }).name).toBe(name.trim());
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['too long', 'a'.repeat(LIMITS.petName.max + 1)],
  ])('refuses a name that is %s', (_, name) => {
    const error = caught(() => Pet.create({ id: 5, name, categoryId: 3, now: created }));
    expect(error).toBeInstanceOf(InvalidValueError);
    expect(error).toMatchObject({ kind: 'invalid', field: 'name' });
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses categoryId %p', (categoryId) => {
    expect(caught(() => Pet.create({ id: 5, name: 'Rex', categoryId, now: created }))).toMatchObject({
      field: 'categoryId',
      kind: 'invalid',
    });
  });

  it('refuses a status outside PetStatus', () => {
    expect(
      caught(() => Pet.create({ id: 5, name: 'Rex', categoryId: 3, status: 'lost' as PetStatus, now: created })),
    ).toMatchObject({
      field: 'status',
      kind: 'invalid',
    });
  });
});

describe('Pet', () => {
  it('restore keeps the props; the snapshot is a copy', () => {
    const props: PetProps = { id: 9, name: 'Tom', categoryId: 2, status: 'pending', createdAt: created, version: 3 };
    const pet = Pet.restore(props);
    props.name = 'changed';
    expect(pet.toSnapshot()).toEqual({
      id: 9,
      name: 'Tom',
      categoryId: 2,
      status: 'pending',
      createdAt: created,
      version: 3,
    });
    const snapshot = pet.toSnapshot();
    snapshot.status = 'sold';
    expect(pet.status).toBe('pending');
  });

  it.each([
    ['available', [true, false, false]],
    ['pending', [false, true, false]],
    ['sold', [false, false, true]],
  ] as const)('a %s pet answers isAvailable/isPending/isSold', (status, flags) => {
    const pet = aPet({ status });
    expect([pet.isAvailable, pet.isPending, pet.isSold]).toEqual(flags);
  });

  it('renames (trimmed) and refuses a bad name, keeping the old one', () => {
    const pet = aPet();
    pet.rename('  Fido ');
    expect(pet.name).toBe('Fido');
    expect(() => pet.rename(' ')).toThrow(InvalidValueError);
    expect(pet.name).toBe('Fido');
  });

  it('moves to another category and refuses a bad id', () => {
    const pet = aPet();
    pet.moveToCategory(11);
    expect(pet.categoryId).toBe(11);
    expect(() => pet.moveToCategory(0)).toThrow(InvalidValueError);
    expect(pet.categoryId).toBe(11);
  });

  describe('assertOrderable (I2)', () => {
    it('lets an available pet be ordered', () => {
      expect(() => aPet().assertOrderable()).not.toThrow();
    });

    it.each(['pending', 'sold'] as const)('refuses a %s pet with pet_not_available', (status) => {
      const error = caught(() => aPet({ status }).assertOrderable());
      expect(error).toBeInstanceOf(PetNotAvailableError);
      expect(error).toMatchObject({
        kind: 'pet_not_available',
        petId: 7,
        status,
      });
      expect((error as Error).message).toContain(status);
    });
  });

  describe('assertDeletable (I6)', () => {
    it('lets a pet without open orders be deleted', () => {
      expect(() => aPet().assertDeletable(0)).not.toThrow();
    });

    it.each([
      [1, '1 open order;'],
      [3, '3 open orders;'],
    ])('refuses a pet with open orders (%i)', (count, text) => {
      const error = caught(() => aPet().assertDeletable(count));
      expect(error).toBeInstanceOf(PetHasOpenOrdersError);
      expect(error).toMatchObject({
        kind: 'pet_has_open_orders',
        openOrders: count,
      });
      expect((error as Error).message).toContain(text);
    });
  });
});

/**
 * The hand-change table of docs/domain.md, cell by cell. `quantity` and `openOrders` are the
 * facts the cell's condition reads; a row per side of each condition.
 */
describe('Pet.changeStatus: the hand-change table', () => {
  type Row = [
    from: PetStatus,
    to: PetStatus,
    quantity: number,
    openOrders: number,
    outcome: 'allowed' | 'no-op' | string,
  ];
  const table: Row[] = [
    // from available
    ['available', 'available', 2, 0, 'no-op'],
    ['available', 'pending', 2, 0, 'allowed'],
    ['available', 'pending', 2, 3, 'allowed'],
    ['available', 'sold', 2, 0, 'allowed'],
    ['available', 'sold', 2, 1, '1 open order'],
    // from pending
    ['pending', 'available', 1, 0, 'allowed'],
    ['pending', 'available', 5, 2, 'allowed'],
    ['pending', 'available', 0, 0, 'no units in stock'],
    ['pending', 'pending', 0, 1, 'no-op'],
    ['pending', 'sold', 0, 0, 'allowed'],
    ['pending', 'sold', 0, 2, '2 open orders'],
    // from sold
    ['sold', 'available', 1, 0, 'allowed'],
    ['sold', 'available', 0, 0, 'no units in stock'],
    ['sold', 'pending', 0, 0, 'cannot be put on hold'],
    ['sold', 'pending', 4, 0, 'cannot be put on hold'],
    ['sold', 'sold', 0, 0, 'no-op'],
  ];

  it.each(table)('%s → %s (quantity %i, open orders %i): %s', (from, to, quantity, openOrders, outcome) => {
    const pet = aPet({ status: from });
    const before = pet.toSnapshot();
    if (outcome === 'allowed' || outcome === 'no-op') {
      pet.changeStatus(to, { quantity, openOrders });
      expect(pet.toSnapshot()).toEqual({ ...before, status: to });
    } else {
      const error = caught(() => pet.changeStatus(to, { quantity, openOrders }));
      expect(error).toBeInstanceOf(InvalidStatusTransitionError);
      expect(error).toMatchObject({
        kind: 'invalid_status_transition',
        from,
        to,
      });
      const message = (error as Error).message;
      expect(message).toContain(`from ${from} to ${to}`);
      expect(message).toContain(outcome);
      expect(pet.toSnapshot()).toEqual(before);
    }
  });

  it('every one of the nine cells is covered', () => {
    const cells = new Set(table.map(([from, to]) => `${from}>${to}`));
    expect(cells.size).toBe(PET_STATUSES.length ** 2);
  });

  it('refuses a target outside PetStatus', () => {
    const pet = aPet();
    expect(caught(() => pet.changeStatus('gone' as PetStatus, { quantity: 1, openOrders: 0 }))).toMatchObject({
      field: 'status',
      kind: 'invalid',
    });
    expect(pet.status).toBe('available');
  });
});

describe('pet errors', () => {
  it.each([
    [new PetNotFoundError(4), 'not_found', 'Pet 4 does not exist.'],
    [new UnknownPetError(4), 'unknown_pet', 'Pet 4 does not exist.'],
    [new PetNotAvailableError(4, 'sold'), 'pet_not_available', 'Pet 4 is sold; only available pets can be ordered.'],
    [
      new InvalidStatusTransitionError('sold', 'pending', 'why'),
      'invalid_status_transition',
      "Cannot change the pet's status from sold to pending: why.",
    ],
    [new PetHasOpenOrdersError(4, 2), 'pet_has_open_orders', 'Pet 4 has 2 open orders; complete or cancel them first.'],
  ])('%p has kind %s', (error, kind, message) => {
    expect(error).toBeInstanceOf(DomainError);
    expect(error.kind).toBe(kind);
    expect(error.message).toBe(message);
    expect(error.name).toBe(error.constructor.name);
  });
});

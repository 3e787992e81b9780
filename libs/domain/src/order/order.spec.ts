import { DomainError, InvalidValueError } from '../common/domain-error';
import { LIMITS } from '../common/limits';
import { Order, OrderProps } from './order';
import { OrderAlreadyCancelledError, OrderAlreadyCompleteError, OrderNotFoundError } from './order.errors';
import { caught } from '../../test-support/caught';

const now = new Date('2030-06-15T12:00:00.000Z');
const at = (iso: string) => new Date(iso);
const place = (overrides: Partial<Parameters<typeof Order.place>[0]> = {}) =>
  Order.place({ id: 21, petId: 7, quantity: 2, ownerId: 11, now, ...overrides });
const anOrder = (overrides: Partial<OrderProps> = {}) =>
  Order.restore({
    id: 21,
    petId: 7,
    quantity: 2,
    shipDate: null,
    status: 'placed',
    createdAt: now,
    statusChangedAt: now,
    ownerId: 11,
    version: 1,
    ...overrides,
  });

describe('Order.place', () => {
  it('makes an open order with the id it is given, without a ship date by default', () => {
    const order = place();
    expect(order.toSnapshot()).toEqual({
      id: 21,
      petId: 7,
      quantity: 2,
      shipDate: null,
      status: 'placed',
      createdAt: now,
      statusChangedAt: now,
      ownerId: 11,
      version: 1,
    });
    expect(order.isOpen).toBe(true);
    expect(order.isComplete).toBe(false);
    expect(order.isCancelled).toBe(false);
  });

  it('takes a null ship date as none', () => {
    expect(place({ shipDate: null }).shipDate).toBeNull();
  });

  it.each([LIMITS.orderQuantity.min, 10, LIMITS.orderQuantity.max])('accepts quantity %i', (quantity) => {
    expect(place({ quantity }).quantity).toBe(quantity);
  });

  it.each([0, -1, LIMITS.orderQuantity.max + 1, 1.5, Number.NaN])('refuses quantity %p', (quantity) => {
    const error = caught(() => place({ quantity }));
    expect(error).toBeInstanceOf(InvalidValueError);
    expect(error).toMatchObject({
      field: 'quantity',
      kind: 'invalid',
    });
  });

  it.each([
    ['in the future', '2030-07-01T00:00:00.000Z'],
    ['now', '2030-06-15T12:00:00.000Z'],
    ['an hour ago', '2030-06-15T11:00:00.000Z'],
    ['exactly a day ago', '2030-06-14T12:00:00.000Z'],
  ])('accepts a ship date %s', (_, iso) => {
    expect(place({ shipDate: at(iso) }).shipDate).toEqual(at(iso));
  });

  it.each([
    ['a day and a millisecond ago', new Date(now.getTime() - LIMITS.shipDatePastMs.max - 1)],
    ['last year', at('2029-06-15T12:00:00.000Z')],
    ['an invalid date', new Date('nonsense')],
  ])('refuses a ship date %s', (_, shipDate) => {
    const error = caught(() => place({ shipDate }));
    expect(error).toBeInstanceOf(InvalidValueError);
    expect(error).toMatchObject({ field: 'shipDate', kind: 'invalid' });
  });

  it('copies the ship date it is given', () => {
    const shipDate = at('2030-07-01T00:00:00.000Z');
    const order = place({ shipDate });
    shipDate.setUTCFullYear(2000);
    expect(order.shipDate).toEqual(at('2030-07-01T00:00:00.000Z'));
  });

  it('refuses an invalid clock', () => {
    expect(() => place({ now: new Date(Number.NaN) })).toThrow(InvalidValueError);
  });
});

describe('Order.complete', () => {
  const completedAt = at('2030-06-20T09:00:00.000Z');

  it.each([
    [
      'given, over the expected one',
      at('2030-06-18T00:00:00.000Z'),
      at('2030-06-17T00:00:00.000Z'),
      at('2030-06-17T00:00:00.000Z'),
    ],
    ['given, with none expected', null, at('2030-06-17T00:00:00.000Z'), at('2030-06-17T00:00:00.000Z')],
    ['given in the past (the actual date)', null, at('2030-01-01T00:00:00.000Z'), at('2030-01-01T00:00:00.000Z')],
    ['the expected one, if none is given', at('2030-06-18T00:00:00.000Z'), undefined, at('2030-06-18T00:00:00.000Z')],
    ['the completion time, if none is given nor expected', null, undefined, completedAt],
    ['the completion time, if null is given and none expected', null, null, completedAt],
  ])('sets the ship date to %s', (_, expected, given, result) => {
    const order = anOrder({ shipDate: expected });
    order.complete(completedAt, given);
    expect(order.shipDate).toEqual(result);
    expect(order.isComplete).toBe(true);
    expect(order.isOpen).toBe(false);
    expect(order.toSnapshot()).toMatchObject({ status: 'completed', statusChangedAt: completedAt, createdAt: now });
  });

  it('refuses an invalid ship date and stays open', () => {
    const order = anOrder();
    expect(caught(() => order.complete(completedAt, new Date('x')))).toMatchObject({
      field: 'shipDate',
    });
    expect(order.isOpen).toBe(true);
    expect(order.shipDate).toBeNull();
  });

  it('refuses a completed order with order_already_complete and keeps it as it was (I5)', () => {
    const order = anOrder({ status: 'completed', shipDate: at('2030-06-17T00:00:00.000Z') });
    const error = caught(() => order.complete(completedAt, at('2030-06-19T00:00:00.000Z')));
    expect(error).toBeInstanceOf(OrderAlreadyCompleteError);
    expect(error).toMatchObject({ kind: 'order_already_complete', orderId: 21 });
    expect(order.toSnapshot()).toEqual(
      anOrder({ status: 'completed', shipDate: at('2030-06-17T00:00:00.000Z') }).toSnapshot(),
    );
  });

  it('completing twice: the second is refused, the first stands', () => {
    const order = anOrder();
    order.complete(completedAt);
    expect(() => order.complete(at('2030-06-21T00:00:00.000Z'))).toThrow(OrderAlreadyCompleteError);
    expect(order.shipDate).toEqual(completedAt);
    expect(order.isComplete).toBe(true);
  });
});

describe('Order.cancel', () => {
  const cancelledAt = at('2030-06-15T12:30:00.000Z');

  it.each(['cancelled', 'expired'] as const)('withdraws an open order (%s), keeping it with the time', (how) => {
    const order = anOrder();
    order.cancel(cancelledAt, how);
    expect(order.isCancelled).toBe(true);
    expect(order.isOpen).toBe(false);
    expect(order.isComplete).toBe(false);
    expect(order.toSnapshot()).toEqual({ ...anOrder().toSnapshot(), status: how, statusChangedAt: cancelledAt });
  });

  it('is `cancelled` unless told otherwise', () => {
    const order = anOrder();
    order.cancel(cancelledAt);
    expect(order.status).toBe('cancelled');
  });

  it('refuses a completed order with order_already_complete (I5)', () => {
    const order = anOrder({ status: 'completed' });
    const error = caught(() => order.cancel(cancelledAt));
    expect(error).toBeInstanceOf(OrderAlreadyCompleteError);
    expect(order.isCancelled).toBe(false);
    expect(order.isComplete).toBe(true);
  });

  it.each(['cancelled', 'expired'] as const)(
    'a %s order is a record: cancelling or completing it again is order_already_cancelled',
    (how) => {
      const order = anOrder();
      order.cancel(cancelledAt, how);
      for (const again of [() => order.cancel(now), () => order.complete(now)]) {
        const error = caught(again);
        expect(error).toBeInstanceOf(OrderAlreadyCancelledError);
        expect(error).toMatchObject({ kind: 'order_already_cancelled', orderId: 21, how });
      }
      expect(order.toSnapshot()).toMatchObject({ status: how, statusChangedAt: cancelledAt });
    },
  );

  it('refuses an invalid time and stays open', () => {
    const order = anOrder();
    expect(caught(() => order.cancel(new Date('x')))).toMatchObject({ field: 'at' });
    expect(order.isOpen).toBe(true);
  });
});

describe('Order', () => {
  it('restore copies the props; getters read them', () => {
    const props: OrderProps = {
      id: 3,
      petId: 4,
      quantity: 5,
      shipDate: now,
      status: 'completed',
      createdAt: at('2030-06-01T00:00:00.000Z'),
      statusChangedAt: at('2030-06-02T00:00:00.000Z'),
      ownerId: 6,
      version: 4,
    };
    const order = Order.restore(props);
    props.quantity = 99;
    expect([order.id, order.petId, order.quantity, order.shipDate, order.isComplete, order.ownerId]).toEqual([
      3,
      4,
      5,
      now,
      true,
      6,
    ]);
  });

  it.each([
    ['placed', true, false, false],
    ['completed', false, true, false],
    ['cancelled', false, false, true],
    ['expired', false, false, true],
  ] as const)('status %s ⇒ isOpen %p, isComplete %p, isCancelled %p', (status, open, complete, cancelled) => {
    const order = anOrder({ status });
    expect([order.isOpen, order.isComplete, order.isCancelled]).toEqual([open, complete, cancelled]);
  });

  it('a completed order outlives its deleted pet (petId null) and stays completed', () => {
    const order = anOrder({ id: 3, petId: null, quantity: 1, shipDate: now, status: 'completed', ownerId: 6 });
    expect(order.petId).toBeNull();
    expect(() => order.assertOpen()).toThrow(OrderAlreadyCompleteError);
    expect(() => order.complete(now)).toThrow(OrderAlreadyCompleteError);
  });

  it('assertOpen passes an open order and refuses a completed one', () => {
    expect(() => anOrder().assertOpen()).not.toThrow();
    expect(() => anOrder({ status: 'completed' }).assertOpen()).toThrow(OrderAlreadyCompleteError);
    expect(() => anOrder({ status: 'expired' }).assertOpen()).toThrow(OrderAlreadyCancelledError);
  });
});

describe('order errors', () => {
  it.each([
    [new OrderNotFoundError(8), 'not_found', 'Order 8 does not exist.'],
    [
      new OrderAlreadyCompleteError(8),
      'order_already_complete',
      'Order 8 is already complete; a completed order cannot be completed again or cancelled.',
    ],
    [
      new OrderAlreadyCancelledError(8, 'cancelled'),
      'order_already_cancelled',
      'Order 8 is already cancelled; it cannot be cancelled again or completed.',
    ],
    [
      new OrderAlreadyCancelledError(8, 'expired'),
      'order_already_cancelled',
      'Order 8 has expired (its hold ran out); it cannot be cancelled or completed.',
    ],
  ])('%p has kind %s', (error, kind, message) => {
    expect(error).toBeInstanceOf(DomainError);
    expect(error.kind).toBe(kind);
    expect(error.message).toBe(message);
  });
});

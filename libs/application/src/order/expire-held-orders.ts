import { Injectable } from '@nestjs/common';
import { DomainError } from '@petstore/domain';
import { Clock, UnitOfWork } from '../ports';
import { OrderCommand } from './order-command';
import { OrderHoldSettings } from './order-hold.settings';
import { OrderRepository } from './order.repository';

/** Orders looked up at a time; each is then cancelled in a transaction of its own. */
export const EXPIRY_BATCH_SIZE = 100;

/**
 * Expires the orders left open longer than the hold (ORDER_HOLD_MINUTES), with the same effects as a
 * cancel by their owner: the units go back to stock and a `pending` pet becomes `available`; the order
 * stays, with the status `expired` (a scheduled job). Each order is one transaction with the usual locks (pet, stock
 * entry, order: OrderCommand), so an order completed or cancelled meanwhile is skipped, and a long run holds no lock
 * for long.
 */
@Injectable()
export class ExpireHeldOrders {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly orders: OrderRepository,
    private readonly command: OrderCommand,
    private readonly clock: Clock,
    private readonly holds: OrderHoldSettings,
  ) {}

  /** Orders cancelled, and orders found expired but left (completed or cancelled meanwhile, or refused). */
  async execute(): Promise<{ expired: number; skipped: number }> {
    const placedBefore = new Date(this.clock.now().getTime() - this.holds.holdMinutes * 60_000);
    const result = { expired: 0, skipped: 0 };
    let afterId = 0;
    for (;;) {
      const ids = await this.orders.listOpenPlacedBefore(placedBefore, { limit: EXPIRY_BATCH_SIZE, afterId });
      for (const id of ids) result[(await this.expire(id)) ? 'expired' : 'skipped']++;
      if (ids.length < EXPIRY_BATCH_SIZE) return result;
      afterId = ids[ids.length - 1];
    }
  }

  private async expire(orderId: number): Promise<boolean> {
    try {
      await this.uow.run(async () => {
        const { order, stock } = await this.command.lockOpen(orderId, null);
        await stock.release(order.quantity);
        order.cancel(this.clock.now(), 'expired');
        await this.command.save(order);
      });
      return true;
    } catch (error) {
      // Completed or cancelled since the look-up (order_already_complete, order_already_cancelled), or refused by a
      // stock rule (stock_limit_exceeded): the other orders still expire; the job logs the count skipped.
      if (error instanceof DomainError) return false;
      throw error;
    }
  }
}

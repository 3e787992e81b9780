import { Injectable } from '@nestjs/common';
import { OrderFilter, OrderRepository, Page, PageRequest, pageFromRows } from '@petstore/application';
import { Order } from '@petstore/domain';
import { FindOptionsWhere, MoreThan } from 'typeorm';
import { nextSequenceId } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';
import { OrderMapper } from './order.mapper';
import { OrderOrmEntity } from './order.orm-entity';

@Injectable()
export class TypeOrmOrderRepository extends OrderRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private get rows() {
    return this.host.manager.getRepository(OrderOrmEntity);
  }

  async findById(id: number): Promise<Order | null> {
    const row = await this.rows.findOneBy({ id });
    return row ? OrderMapper.toDomain(row) : null;
  }

  async lockById(id: number): Promise<Order | null> {
    if (!this.host.inTransaction) throw new Error('lockById needs a transaction (UnitOfWork.run).');
    const row = await this.rows.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    return row ? OrderMapper.toDomain(row) : null;
  }

  async list(filter: OrderFilter, { limit, afterId }: PageRequest): Promise<Page<Order>> {
    const where: FindOptionsWhere<OrderOrmEntity> = {};
    if (afterId) where.id = MoreThan(afterId);
    if (filter.ownerId !== undefined) where.ownerId = filter.ownerId;
    if (filter.petId !== undefined) where.petId = filter.petId;
    if (filter.complete !== undefined) where.complete = filter.complete;
    const rows = await this.rows.find({ where, order: { id: 'ASC' }, take: limit + 1 });
    return pageFromRows(rows.map(OrderMapper.toDomain), limit, (o) => o.id);
  }

  async countOpenForPet(petId: number, exceptOrderId?: number): Promise<number> {
    const [{ count }] = await this.host.manager.query<Array<{ count: number }>>(
      `SELECT count(*)::int AS count FROM orders
        WHERE pet_id = $1 AND NOT complete AND ($2::bigint IS NULL OR id <> $2::bigint)`,
      [petId, exceptOrderId ?? null],
    );
    return count;
  }

  async lockOwnerAndCountOpenUnits(ownerId: number): Promise<number> {
    if (!this.host.inTransaction) throw new Error('lockOwnerAndCountOpenUnits needs a transaction (UnitOfWork.run).');
    await this.host.manager.query(`SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE`, [ownerId]);
    const [{ units }] = await this.host.manager.query<Array<{ units: number }>>(
      `SELECT coalesce(sum(quantity), 0)::int AS units FROM orders WHERE owner_id = $1 AND NOT complete`,
      [ownerId],
    );
    return units;
  }

  async listOpenPlacedBefore(placedBefore: Date, page: { limit: number; afterId: number }): Promise<number[]> {
    const rows = await this.host.manager.query<Array<{ id: string }>>(
      `SELECT id FROM orders WHERE NOT complete AND created_at < $1 AND id > $2 ORDER BY id LIMIT $3`,
      [placedBefore, page.afterId, page.limit],
    );
    return rows.map((row) => Number(row.id));
  }

  nextId(): Promise<number> {
    return nextSequenceId(this.host.manager, 'orders');
  }

  /** created_at is left to its default, now(): the time the order was placed. */
  async add(order: Order): Promise<void> {
    await this.rows.insert(OrderMapper.toPersistence(order));
  }

  async save(order: Order): Promise<void> {
    const row = OrderMapper.toPersistence(order);
    await this.rows.update({ id: row.id }, { shipDate: row.shipDate, complete: row.complete });
  }

  async delete(id: number): Promise<void> {
    await this.rows.delete({ id });
  }
}

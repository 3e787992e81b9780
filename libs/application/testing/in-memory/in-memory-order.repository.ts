import { Order } from '@petstore/domain';
import { OrderFilter, OrderRepository } from '../../src/order/order.repository';
import { ConstraintViolationError } from '../../src/ports';
import { Page, PageRequest } from '../../src/common/page';
import { pageOf, primaryKeyTaken } from './in-memory-catalogue';
import { InMemoryDatabase, OrderRow } from './in-memory-database';

const toOrder = ({ createdAt: _, ...props }: OrderRow): Order => Order.restore(props);

/** Orders; an order is placed at the store's clock time (the database's `now()` at insert). */
export class InMemoryOrderRepository extends OrderRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  private get rows(): OrderRow[] {
    return [...this.db.tables.orders.values()];
  }

  async findById(id: number): Promise<Order | null> {
    const row = this.db.tables.orders.get(id);
    return row ? toOrder(row) : null;
  }

  async lockById(id: number): Promise<Order | null> {
    this.db.assertInTransaction('lockById');
    return this.findById(id);
  }

  async list(filter: OrderFilter, page: PageRequest): Promise<Page<Order>> {
    const rows = this.rows.filter(
      (row) =>
        (filter.ownerId === undefined || row.ownerId === filter.ownerId) &&
        (filter.petId === undefined || row.petId === filter.petId) &&
        (filter.complete === undefined || row.complete === filter.complete),
    );
    return pageOf(rows.map(toOrder), (order) => order.id, page);
  }

  async countOpenForPet(petId: number, exceptOrderId?: number): Promise<number> {
    return this.rows.filter((row) => row.petId === petId && !row.complete && row.id !== exceptOrderId).length;
  }

  async lockOwnerAndCountOpenUnits(ownerId: number): Promise<number> {
    this.db.assertInTransaction('lockOwnerAndCountOpenUnits');
    return this.rows
      .filter((row) => row.ownerId === ownerId && !row.complete)
      .reduce((sum, row) => sum + row.quantity, 0);
  }

  async listOpenPlacedBefore(placedBefore: Date, page: { limit: number; afterId: number }): Promise<number[]> {
    return this.rows
      .filter((row) => !row.complete && row.createdAt < placedBefore && row.id > page.afterId)
      .map((row) => row.id)
      .sort((a, b) => a - b)
      .slice(0, page.limit);
  }

  async nextId(): Promise<number> {
    return this.db.nextId('orders');
  }

  /** A new order checks its references (pet, owner) as the foreign keys do. */
  async add(order: Order): Promise<void> {
    const props = order.toSnapshot();
    if (this.db.tables.orders.has(props.id)) throw primaryKeyTaken('orders', props.id);
    if (props.petId !== null && !this.db.tables.pets.has(props.petId)) {
      throw new ConstraintViolationError('foreign_key', 'orders_pet_id_fkey', `No pet ${props.petId} for the order.`);
    }
    if (!this.db.tables.accounts.has(props.ownerId)) {
      throw new ConstraintViolationError('foreign_key', 'orders_owner_id_fkey', `No account ${props.ownerId}.`);
    }
    this.db.tables.orders.set(props.id, { ...props, createdAt: this.db.clock.now() });
  }

  /** An update writes ship date and state. */
  async save(order: Order): Promise<void> {
    const { id, shipDate, complete } = order.toSnapshot();
    const existing = this.db.tables.orders.get(id);
    if (existing) Object.assign(existing, { shipDate, complete });
  }

  async delete(id: number): Promise<void> {
    this.db.tables.orders.delete(id);
  }
}

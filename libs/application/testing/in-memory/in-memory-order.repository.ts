import { FIRST_VERSION, Order } from '@petstore/domain';
import { OrderFilter, OrderRepository } from '../../src/order/order.repository';
import { OpenOrders } from '../../src/stock/open-orders';
import { ConstraintViolationError } from '../../src/ports';
import { Page, PageRequest } from '../../src/common/page';
import { pageOf, primaryKeyTaken } from './in-memory-catalogue';
import { InMemoryDatabase, OrderRow, versionAfter } from './in-memory-database';

const toOrder = (row: OrderRow): Order => Order.restore({ ...row });

/** Orders, kept as records whatever their status (never deleted). */
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
        (filter.complete === undefined || (row.status === 'completed') === filter.complete) &&
        (filter.status === undefined || filter.status.includes(row.status)),
    );
    return pageOf(rows.map(toOrder), (order) => order.id, page);
  }

  async countOpenForPet(petId: number, exceptOrderId?: number): Promise<number> {
    return this.rows.filter((row) => row.petId === petId && row.status === 'placed' && row.id !== exceptOrderId).length;
  }

  async countOpenUnits(ownerId: number): Promise<number> {
    return this.rows
      .filter((row) => row.ownerId === ownerId && row.status === 'placed')
      .reduce((sum, row) => sum + row.quantity, 0);
  }

  async listOpenPlacedBefore(placedBefore: Date, page: { limit: number; afterId: number }): Promise<number[]> {
    return this.rows
      .filter((row) => row.status === 'placed' && row.createdAt < placedBefore && row.id > page.afterId)
      .map((row) => row.id)
      .sort((a, b) => a - b)
      .slice(0, page.limit);
  }

  async nextId(): Promise<number> {
    return this.db.nextId('orders');
  }

  /** A new order checks its references (pet, owner) as the foreign keys do. */
  async add(order: Order): Promise<void> {
    const props = { ...order.toSnapshot(), version: FIRST_VERSION };
    if (this.db.tables.orders.has(props.id)) throw primaryKeyTaken('orders', props.id);
    if (props.petId !== null && !this.db.tables.pets.has(props.petId)) {
      throw new ConstraintViolationError('foreign_key', 'orders_pet_id_fkey', `No pet ${props.petId} for the order.`);
    }
    if (!this.db.tables.accounts.has(props.ownerId)) {
      throw new ConstraintViolationError('foreign_key', 'orders_owner_id_fkey', `No account ${props.ownerId}.`);
    }
    this.db.tables.orders.set(props.id, props);
  }

  /** An update writes ship date, status and when it changed; the version is the database's (versionAfter). */
  async save(order: Order): Promise<void> {
    const { id, shipDate, status, statusChangedAt } = order.toSnapshot();
    const existing = this.db.tables.orders.get(id);
    if (!existing) return;
    const next = { ...existing, shipDate, status, statusChangedAt };
    next.version = versionAfter(existing, next, ['shipDate', 'status', 'statusChangedAt']);
    Object.assign(existing, next);
  }
}

/** The catalogue's question about a pet's open orders, answered from the same rows (PgOpenOrders' fake). */
export class InMemoryOpenOrders extends OpenOrders {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async countForPet(petId: number): Promise<number> {
    return [...this.db.tables.orders.values()].filter((row) => row.petId === petId && row.status === 'placed').length;
  }
}

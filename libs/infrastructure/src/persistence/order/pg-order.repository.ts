import { Injectable } from '@nestjs/common';
import { OrderFilter, OrderRepository, Page, PageRequest, pageFromRows } from '@petstore/application';
import { Order, OrderStatus } from '@petstore/domain';
import { listStatement } from '../../database/list-statement';
import { SequenceBlocks } from '../../database/next-id';
import { heldWrite } from '../../database/session/held-write';
import { TransactionHost } from '../../database/transaction-host';

/*
 * Fixed SQL run straight on pg by the transaction host (no query building, no entity hydration):
 * rows map straight to domain objects. The table is the one its migrations create.
 */
/** `version` is read, never written: the database keeps it (migration ResourceVersions). */
const COLUMNS = `id, pet_id, owner_id, quantity, ship_date, status, created_at, status_changed_at, version`;
const FIND_BY_ID = `SELECT ${COLUMNS} FROM orders WHERE id = $1`;
const LOCK_BY_ID = `SELECT ${COLUMNS} FROM orders WHERE id = $1 FOR UPDATE`;
/**
 * `list` (listStatement): the conditions of the filter given, then the keyset order and limit. `complete` is the
 * specification's field (fulfilled or not); `status` any of a list.
 */
const LIST_SELECT = `SELECT ${COLUMNS} FROM orders`;
const LIST_AFTER = (p: string) => `id > ${p}`;
const LIST_OWNER = (p: string) => `owner_id = ${p}`;
const LIST_PET = (p: string) => `pet_id = ${p}`;
const LIST_COMPLETE = (p: string) => `complete = ${p}`;
const LIST_STATUSES = (p: string) => `status = ANY(${p})`;
const LIST_ORDER = (limit: string) => `ORDER BY id LIMIT ${limit}`;
/** `complete` is written from the status (a CHECK holds them equal). */
const INSERT = heldWrite({
  verb: 'insert',
  table: 'orders',
  params: 8,
  sql: (p) => `INSERT INTO orders (id, pet_id, owner_id, quantity, ship_date, status, complete, created_at,
  status_changed_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}::text, ${p(6)}::text = 'completed',
  ${p(7)}, ${p(8)})`,
});
const UPDATE = heldWrite({
  verb: 'update',
  table: 'orders',
  params: 4,
  sql: (p) => `UPDATE orders SET ship_date = ${p(2)}, status = ${p(3)}::text,
  complete = (${p(3)}::text = 'completed'), status_changed_at = ${p(4)} WHERE id = ${p(1)}`,
});
/** "Open" is `status = 'placed'`: the partial indexes of the open orders answer these. */
const COUNT_OPEN_FOR_PET = `SELECT count(*)::int AS count FROM orders
  WHERE pet_id = $1 AND status = 'placed' AND ($2::bigint IS NULL OR id <> $2::bigint)`;
const COUNT_OPEN_UNITS = `SELECT coalesce(sum(quantity), 0)::int AS units FROM orders
  WHERE owner_id = $1 AND status = 'placed'`;
const LIST_OPEN_PLACED_BEFORE = `SELECT id FROM orders
  WHERE status = 'placed' AND created_at < $1 AND id > $2 ORDER BY id LIMIT $3`;

/** A row of `orders` as pg returns it (bigint as text, timestamptz as a Date). */
interface OrderRow {
  id: string;
  pet_id: string | null;
  owner_id: string;
  quantity: number;
  ship_date: Date | null;
  status: OrderStatus;
  created_at: Date;
  status_changed_at: Date;
  version: string;
}

const toOrder = (row: OrderRow): Order =>
  Order.restore({
    id: Number(row.id),
    petId: row.pet_id === null ? null : Number(row.pet_id),
    quantity: row.quantity,
    shipDate: row.ship_date,
    status: row.status,
    createdAt: row.created_at,
    statusChangedAt: row.status_changed_at,
    ownerId: Number(row.owner_id),
    version: Number(row.version),
  });

@Injectable()
export class PgOrderRepository extends OrderRepository {
  private readonly ids = new SequenceBlocks('orders');

  constructor(private readonly host: TransactionHost) {
    super();
  }

  async findById(id: number): Promise<Order | null> {
    const [row] = await this.host.query<OrderRow>(FIND_BY_ID, [id]);
    return row ? toOrder(row) : null;
  }

  async lockById(id: number): Promise<Order | null> {
    this.host.requireTransaction('lockById');
    const [row] = await this.host.query<OrderRow>(LOCK_BY_ID, [id]);
    return row ? toOrder(row) : null;
  }

  async list(filter: OrderFilter, { limit, afterId }: PageRequest): Promise<Page<Order>> {
    const { text, params } = listStatement({
      select: LIST_SELECT,
      conditions: [
        [afterId || undefined, LIST_AFTER],
        [filter.ownerId ?? undefined, LIST_OWNER],
        [filter.petId ?? undefined, LIST_PET],
        [filter.complete ?? undefined, LIST_COMPLETE],
        [filter.status ?? undefined, LIST_STATUSES],
      ],
      order: LIST_ORDER,
      limit: limit + 1,
    });
    const rows = await this.host.query<OrderRow>(text, params);
    return pageFromRows(rows.map(toOrder), limit, (o) => o.id);
  }

  async countOpenForPet(petId: number, exceptOrderId?: number): Promise<number> {
    const [{ count }] = await this.host.query<{ count: number }>(COUNT_OPEN_FOR_PET, [petId, exceptOrderId ?? null]);
    return count;
  }

  /** A statement of its own, after the account's lock (PlaceOrder): it then sees the orders committed meanwhile. */
  async countOpenUnits(ownerId: number): Promise<number> {
    const [{ units }] = await this.host.query<{ units: number }>(COUNT_OPEN_UNITS, [ownerId]);
    return units;
  }

  async listOpenPlacedBefore(placedBefore: Date, page: { limit: number; afterId: number }): Promise<number[]> {
    const rows = await this.host.query<{ id: string }>(LIST_OPEN_PLACED_BEFORE, [
      placedBefore,
      page.afterId,
      page.limit,
    ]);
    return rows.map((row) => Number(row.id));
  }

  /** Placing an order is the hot write: its id comes from a block of the sequence, mostly without a round trip. */
  nextId(): Promise<number> {
    return this.ids.take(this.host);
  }

  /**
   * Held (TransactionHost.hold): sent with the stock entry's update and the order's event at the commit. It cannot
   * fail but by a bug: the pet is locked by the command, the owner is the caller, the domain checked the values.
   */
  async add(order: Order): Promise<void> {
    const { id, petId, ownerId, quantity, shipDate, status, createdAt, statusChangedAt } = order.toSnapshot();
    await this.host.hold(INSERT, [id, petId, ownerId, quantity, shipDate, status, createdAt, statusChangedAt]);
  }

  /** Held, as `add`: the order is locked by the command that changes it. */
  async save(order: Order): Promise<void> {
    const { id, shipDate, status, statusChangedAt } = order.toSnapshot();
    await this.host.hold(UPDATE, [id, shipDate, status, statusChangedAt]);
  }
}

import { Injectable } from '@nestjs/common';
import { StockRepository } from '@petstore/application';
import { Pet, PetStatus, Stock } from '@petstore/domain';
import { heldWrite } from '../../database/session/held-write';
import { TransactionHost } from '../../database/transaction-host';

/*
 * Fixed SQL run straight on pg by the transaction host (no query building, no entity hydration):
 * rows map straight to domain objects. The table is the one its migrations create.
 */
const INSERT = `INSERT INTO stock (pet_id, quantity) VALUES ($1, $2)`;
/**
 * The pet and its entry in one round trip. The rows are locked in the order `FOR UPDATE OF` lists their tables
 * once the join has found them, whatever plan it took: the pet's first, then the entry's, the order every command
 * locks in (so no two commands wait on each other in a cycle).
 */
const LOCK_WITH_PET = `SELECT p.id, p.name, p.category_id, p.status, p.created_at, p.version, s.quantity,
    s.version AS stock_version
  FROM pets p JOIN stock s ON s.pet_id = p.id WHERE p.id = $1 FOR UPDATE OF p, s`;
const UPDATE = heldWrite({
  verb: 'update',
  table: 'stock',
  params: 2,
  sql: (p) => `UPDATE stock SET quantity = ${p(2)} WHERE pet_id = ${p(1)}`,
});

/** A pet with its entry's quantity, as pg returns it (bigint as text). */
interface PetStockRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus;
  created_at: Date;
  version: string;
  quantity: number;
  stock_version: string;
}

@Injectable()
export class PgStockRepository extends StockRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async create(item: Stock): Promise<Stock> {
    const { petId, quantity } = item.toSnapshot();
    await this.host.query(INSERT, [petId, quantity]);
    this.host.changed('stock');
    return item;
  }

  async lockWithPet(petId: number): Promise<{ pet: Pet; stock: Stock } | null> {
    this.host.requireTransaction('lockWithPet');
    const [row] = await this.host.query<PetStockRow>(LOCK_WITH_PET, [petId]);
    if (!row) return null;
    const id = Number(row.id);
    return {
      pet: Pet.restore({
        id,
        name: row.name,
        categoryId: Number(row.category_id),
        status: row.status,
        createdAt: row.created_at,
        version: Number(row.version),
      }),
      stock: Stock.restore({ petId: id, quantity: row.quantity, version: Number(row.stock_version) }),
    };
  }

  /**
   * Held (TransactionHost.hold): the stock commands lock the entry first, so the update cannot fail but by a bug; it
   * goes with the order's row and its event in one statement at the commit.
   */
  async save(item: Stock): Promise<Stock> {
    const { petId, quantity } = item.toSnapshot();
    await this.host.hold(UPDATE, [petId, quantity], {
      rows: 1,
      mismatch: () => new Error(`Pet ${petId} has no stock entry to update.`),
    });
    return item;
  }
}

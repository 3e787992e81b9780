import { Injectable } from '@nestjs/common';
import { StockRepository } from '@petstore/application';
import { Stock } from '@petstore/domain';
import { TransactionHost } from '../../database/transaction-host';

/*
 * Fixed SQL run straight on pg by the transaction host (no query building, no entity hydration):
 * rows map straight to domain objects. The table is the one its migrations create.
 */
const INSERT = `INSERT INTO stock (pet_id, quantity) VALUES ($1, $2)`;
const LOCK_BY_PET_ID = `SELECT pet_id, quantity FROM stock WHERE pet_id = $1 FOR UPDATE`;
const UPDATE = `UPDATE stock SET quantity = $2 WHERE pet_id = $1`;

/** A row of `stock` as pg returns it (bigint as text, integer as a number). */
interface StockRow {
  pet_id: string;
  quantity: number;
}

@Injectable()
export class PgStockRepository extends StockRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async create(item: Stock): Promise<Stock> {
    const { petId, quantity } = item.toSnapshot();
    await this.host.query(INSERT, [petId, quantity]);
    return item;
  }

  async lockByPetId(petId: number): Promise<Stock | null> {
    if (!this.host.inTransaction) throw new Error('lockByPetId needs a transaction (UnitOfWork.run).');
    const [row] = await this.host.query<StockRow>(LOCK_BY_PET_ID, [petId]);
    return row ? Stock.restore({ petId: Number(row.pet_id), quantity: row.quantity }) : null;
  }

  async save(item: Stock): Promise<Stock> {
    const { petId, quantity } = item.toSnapshot();
    const { affected } = await this.host.execute(UPDATE, [petId, quantity]);
    if (!affected) throw new Error(`Pet ${petId} has no stock entry to update.`);
    return item;
  }
}

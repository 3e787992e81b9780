import { Injectable } from '@nestjs/common';
import { Page, PageRequest, StockLevel, StockLevelFilter, StockLevels, pageFromRows } from '@petstore/application';
import { PetStatus } from '@petstore/domain';
import { TransactionHost } from '../../database/transaction-host';

/*
 * Stock entries joined to their pets (one row each: `stock.pet_id` is the pets' key), in fixed SQL
 * run straight on pg by the transaction host (no query building).
 */
const SELECT = `SELECT stock.pet_id, stock.quantity, pet.status, stock.version
  FROM stock INNER JOIN pets pet ON pet.id = stock.pet_id`;
const FIND = `${SELECT} WHERE stock.pet_id = $1`;
/** `$1`: the pet id to continue after, or null; `$2`: the statuses, or null for any; `$3`: the rows to read. */
const LIST =
  `${SELECT} WHERE ($1::bigint IS NULL OR stock.pet_id > $1) AND ($2::varchar[] IS NULL OR pet.status = ANY($2))` +
  ` ORDER BY stock.pet_id LIMIT $3`;

/** A row as pg returns it (bigint as text, integer as a number). */
interface StockLevelRow {
  pet_id: string;
  quantity: number;
  status: PetStatus;
  version: string;
}

@Injectable()
export class PgStockLevels extends StockLevels {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async find(petId: number): Promise<StockLevel | null> {
    const [row] = await this.host.query<StockLevelRow>(FIND, [petId]);
    return row ? toStockLevel(row) : null;
  }

  async list(filter: StockLevelFilter, { limit, afterId }: PageRequest): Promise<Page<StockLevel>> {
    const params = [afterId ?? null, filter.statuses ?? null, limit + 1];
    const rows = await this.host.query<StockLevelRow>(LIST, params);
    return pageFromRows(rows.map(toStockLevel), limit, (level) => level.petId);
  }
}

function toStockLevel(row: StockLevelRow): StockLevel {
  return { petId: Number(row.pet_id), quantity: row.quantity, status: row.status, version: Number(row.version) };
}

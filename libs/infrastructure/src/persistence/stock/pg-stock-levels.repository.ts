import { Injectable } from '@nestjs/common';
import { Page, PageRequest, StockLevel, StockLevelFilter, StockLevels, pageFromRows } from '@petstore/application';
import { PetStatus } from '@petstore/domain';
import { listStatement } from '../../database/list-statement';
import { TransactionHost } from '../../database/transaction-host';

/*
 * Stock entries joined to their pets (one row each: `stock.pet_id` is the pets' key), in fixed SQL
 * run straight on pg by the transaction host (no query building).
 */
const SELECT = `SELECT stock.pet_id, stock.quantity, pet.status, stock.version
  FROM stock INNER JOIN pets pet ON pet.id = stock.pet_id`;
const FIND = `${SELECT} WHERE stock.pet_id = $1`;
/** `list` (listStatement): after a pet id, of some statuses, in pet id order. */
const LIST_AFTER = (p: string) => `stock.pet_id > ${p}`;
const LIST_STATUSES = (p: string) => `pet.status = ANY(${p})`;
const LIST_ORDER = (limit: string) => `ORDER BY stock.pet_id LIMIT ${limit}`;

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
    const { text, params } = listStatement({
      select: SELECT,
      conditions: [
        [afterId, LIST_AFTER],
        [filter.statuses ?? undefined, LIST_STATUSES],
      ],
      order: LIST_ORDER,
      limit: limit + 1,
    });
    const rows = await this.host.query<StockLevelRow>(text, params);
    return pageFromRows(rows.map(toStockLevel), limit, (level) => level.petId);
  }
}

function toStockLevel(row: StockLevelRow): StockLevel {
  return { petId: Number(row.pet_id), quantity: row.quantity, status: row.status, version: Number(row.version) };
}

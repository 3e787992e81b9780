import { Injectable } from '@nestjs/common';
import { Page, PageRequest, StockLevel, StockLevelFilter, StockLevels, pageFromRows } from '@petstore/application';
import { PetStatus } from '@petstore/domain';
import { TransactionHost } from '../../database/transaction-host';
import { StockOrmEntity } from './stock.orm-entity';
import { PetOrmEntity } from '../pet/pet.orm-entity';

interface StockLevelRow {
  petId: string;
  quantity: number;
  status: PetStatus;
}

/** Stock entries joined to their pets (one row each: `stock.pet_id` is the pets' key). */
@Injectable()
export class TypeOrmStockLevels extends StockLevels {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private query() {
    return this.host.manager
      .createQueryBuilder(StockOrmEntity, 'stock')
      .innerJoin(PetOrmEntity, 'pet', 'pet.id = stock.petId')
      .select('stock.petId', 'petId')
      .addSelect('stock.quantity', 'quantity')
      .addSelect('pet.status', 'status');
  }

  async find(petId: number): Promise<StockLevel | null> {
    const row = await this.query().where('stock.petId = :petId', { petId }).getRawOne<StockLevelRow>();
    return row ? toStockLevel(row) : null;
  }

  async list(filter: StockLevelFilter, { limit, afterId }: PageRequest): Promise<Page<StockLevel>> {
    const query = this.query()
      .orderBy('stock.petId', 'ASC')
      .limit(limit + 1);
    if (afterId !== undefined) query.andWhere('stock.petId > :afterId', { afterId });
    if (filter.statuses !== undefined) query.andWhere('pet.status = ANY(:statuses)', { statuses: filter.statuses });
    const rows = await query.getRawMany<StockLevelRow>();
    return pageFromRows(rows.map(toStockLevel), limit, (level) => level.petId);
  }
}

function toStockLevel(row: StockLevelRow): StockLevel {
  return { petId: Number(row.petId), quantity: row.quantity, status: row.status };
}

import { Injectable } from '@nestjs/common';
import { StockRepository } from '@petstore/application';
import { Stock } from '@petstore/domain';
import { TransactionHost } from '../../database/transaction-host';
import { StockMapper } from './stock.mapper';
import { StockOrmEntity } from './stock.orm-entity';

@Injectable()
export class TypeOrmStockRepository extends StockRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private get rows() {
    return this.host.manager.getRepository(StockOrmEntity);
  }

  async create(item: Stock): Promise<Stock> {
    await this.rows.insert(StockMapper.toPersistence(item));
    return item;
  }

  async lockByPetId(petId: number): Promise<Stock | null> {
    const row = await this.rows.findOne({ where: { petId }, lock: { mode: 'pessimistic_write' } });
    return row ? StockMapper.toDomain(row) : null;
  }

  async save(item: Stock): Promise<Stock> {
    const { petId, quantity } = item.toSnapshot();
    const result = await this.rows.update({ petId }, { quantity });
    if (!result.affected) throw new Error(`Pet ${petId} has no stock entry to update.`);
    return item;
  }
}

import { Injectable } from '@nestjs/common';
import { InventoryRepository } from '@petstore/application';
import { InventoryItem } from '@petstore/domain';
import { TransactionHost } from '../../database/transaction-host';
import { InventoryMapper } from './inventory.mapper';
import { InventoryOrmEntity } from './inventory.orm-entity';

@Injectable()
export class TypeOrmInventoryRepository extends InventoryRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private get rows() {
    return this.host.manager.getRepository(InventoryOrmEntity);
  }

  async create(item: InventoryItem): Promise<InventoryItem> {
    await this.rows.insert(InventoryMapper.toPersistence(item));
    return item;
  }

  async lockByPetId(petId: number): Promise<InventoryItem | null> {
    const row = await this.rows.findOne({ where: { petId }, lock: { mode: 'pessimistic_write' } });
    return row ? InventoryMapper.toDomain(row) : null;
  }

  async save(item: InventoryItem): Promise<InventoryItem> {
    const { petId, quantity } = item.toSnapshot();
    const result = await this.rows.update({ petId }, { quantity });
    if (!result.affected) throw new Error(`Pet ${petId} has no inventory entry to update.`);
    return item;
  }
}

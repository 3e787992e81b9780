import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintTransformer } from '../bigint.transformer';

/** One row per pet; deleted with the pet (ON DELETE CASCADE). */
@Entity({ name: 'stock' })
export class StockOrmEntity {
  @PrimaryColumn({ name: 'pet_id', type: 'bigint', transformer: bigintTransformer })
  petId: number;

  @Column({ type: 'integer' })
  quantity: number;
}

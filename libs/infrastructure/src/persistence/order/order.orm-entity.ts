import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintTransformer } from '../bigint.transformer';

@Entity({ name: 'orders' })
export class OrderOrmEntity {
  // Filled from the sequence by the repository's nextId() before the insert (bigserial's default unused).
  @PrimaryColumn({ type: 'bigint', transformer: bigintTransformer })
  id: number;

  /** NULL only for a completed order whose pet was deleted (history). */
  @Column({ name: 'pet_id', type: 'bigint', nullable: true, transformer: bigintTransformer })
  petId: number | null;

  @Column({ name: 'owner_id', type: 'bigint', transformer: bigintTransformer })
  ownerId: number;

  @Column({ type: 'integer' })
  quantity: number;

  @Column({ name: 'ship_date', type: 'timestamptz', nullable: true })
  shipDate: Date | null;

  @Column({ type: 'boolean' })
  complete: boolean;
}

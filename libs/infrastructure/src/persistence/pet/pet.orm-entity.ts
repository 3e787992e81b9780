import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { PetStatus } from '@petstore/domain';
import { bigintTransformer } from '../bigint.transformer';

@Entity({ name: 'pets' })
export class PetOrmEntity {
  // Filled from the sequence by the repository's nextId() before the insert (bigserial's default unused).
  @PrimaryColumn({ type: 'bigint', transformer: bigintTransformer })
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ name: 'category_id', type: 'bigint', transformer: bigintTransformer })
  categoryId: number;

  @Column({ type: 'varchar', length: 16 })
  status: PetStatus;
}

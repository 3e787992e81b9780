import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintTransformer } from '../bigint.transformer';

@Entity({ name: 'categories' })
export class CategoryOrmEntity {
  // Filled from the sequence by the repository's nextId() before the insert (bigserial's default unused).
  @PrimaryColumn({ type: 'bigint', transformer: bigintTransformer })
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  description: string | null;
}

import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { Role } from '@petstore/domain';
import { bigintTransformer } from '../bigint.transformer';

@Entity({ name: 'accounts' })
export class AccountOrmEntity {
  // Filled from the sequence by the repository's nextId() before the insert (bigserial's default unused).
  @PrimaryColumn({ type: 'bigint', transformer: bigintTransformer })
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  role: Role;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity({ name: 'api_keys' })
export class ApiKeyOrmEntity {
  // Filled from the sequence by the repository's nextId() before the insert (bigserial's default unused).
  @PrimaryColumn({ type: 'bigint', transformer: bigintTransformer })
  id: number;

  @Column({ name: 'account_id', type: 'bigint', transformer: bigintTransformer })
  accountId: number;

  @ManyToOne(() => AccountOrmEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: AccountOrmEntity;

  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  @Column({ type: 'char', length: 64 })
  hash: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ type: 'boolean', default: false })
  bootstrap: boolean;
}

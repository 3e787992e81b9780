import type { MessageStatus } from '@petstore/domain';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintTransformer } from '../bigint.transformer';

@Entity({ name: 'messages' })
export class MessageOrmEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  /** Internal: insertion order, the keyset of the inbox. Never exposed. */
  @Column({ type: 'bigint', insert: false, update: false, transformer: bigintTransformer })
  seq: number;

  @Column({ name: 'owner_id', type: 'bigint', transformer: bigintTransformer })
  ownerId: number;

  @Column({ name: 'body', type: 'varchar', length: 2000 })
  text: string;

  @Column({ type: 'varchar', length: 16 })
  status: MessageStatus;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;

  /** Delivery attempts made so far (the one that succeeded included). The job queue keeps when the next is due. */
  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'last_error', type: 'varchar', length: 1000, nullable: true })
  lastError: string | null;
}

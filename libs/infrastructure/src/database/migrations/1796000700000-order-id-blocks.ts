import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Order ids in blocks of 50 (SequenceBlocks, "pooled-lo"): each `nextval` of the orders' sequence starts a block its
 * caller uses alone, so placing an order mostly needs no round trip for its id. Every existing id stays below the
 * next value; a plain `nextval` (an older instance during a rolling deploy) takes a whole block for one id.
 */
export class OrderIdBlocks1796000700000 implements MigrationInterface {
  name = 'OrderIdBlocks1796000700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER SEQUENCE orders_id_seq INCREMENT BY 50`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER SEQUENCE orders_id_seq INCREMENT BY 1`);
  }
}

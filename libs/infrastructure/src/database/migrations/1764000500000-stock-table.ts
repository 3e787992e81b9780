import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One word per concept: the table of the pets' stock entries was created as `inventory`
 * (PetsAndInventory1763856000000); it and its constraints now say `stock`, as the code does.
 * Renaming the primary key constraint renames its index too. Rows, locks and the foreign key's
 * ON DELETE CASCADE are untouched: a rename is a catalogue change only.
 */
export class StockTable1764000500000 implements MigrationInterface {
  name = 'StockTable1764000500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE inventory RENAME TO stock`);
    await q.query(`ALTER TABLE stock RENAME CONSTRAINT inventory_pkey TO stock_pkey`);
    await q.query(`ALTER TABLE stock RENAME CONSTRAINT inventory_pet_fk TO stock_pet_fk`);
    await q.query(`ALTER TABLE stock RENAME CONSTRAINT inventory_quantity_check TO stock_quantity_check`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE stock RENAME CONSTRAINT stock_quantity_check TO inventory_quantity_check`);
    await q.query(`ALTER TABLE stock RENAME CONSTRAINT stock_pet_fk TO inventory_pet_fk`);
    await q.query(`ALTER TABLE stock RENAME CONSTRAINT stock_pkey TO inventory_pkey`);
    await q.query(`ALTER TABLE stock RENAME TO inventory`);
  }
}

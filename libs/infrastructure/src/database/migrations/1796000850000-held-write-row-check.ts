import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `petstore_expect_rows`: what a combined statement of held writes (TransactionHost.hold, session/held-write.ts)
 * calls when a write wrote another count of rows than it expected. It raises SQLSTATE PS001 (a class of the
 * service's own, which no PostgreSQL error uses) with the write's index in DETAIL, so the service reads the error's
 * fields, not its message. The statement calls it only when the count differs: a matching count costs nothing.
 *
 * An expand step (docs/development.md, "Migrations without downtime"): a new function that the release before
 * never calls, so it serves the schema as it is; `CREATE OR REPLACE`, so a retry or a second instance is harmless.
 */
export class HeldWriteRowCheck1796000850000 implements MigrationInterface {
  name = 'HeldWriteRowCheck1796000850000';
  readonly servesFrom = '1.0.0';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION petstore_expect_rows(held_write int, expected bigint, actual bigint) RETURNS int
      LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        IF actual IS DISTINCT FROM expected THEN
          RAISE EXCEPTION 'held write % wrote % rows, not %', held_write, actual, expected
            USING ERRCODE = 'PS001', DETAIL = held_write::text;
        END IF;
        RETURN 0;
      END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS petstore_expect_rows(int, bigint, bigint)`);
  }
}

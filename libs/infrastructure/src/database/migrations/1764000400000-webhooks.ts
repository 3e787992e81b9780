import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks: the endpoints, the outbox of events (written by the transaction of the change they
 * report) and one delivery per (event, endpoint), which records its attempts.
 */
export class Webhooks1764000400000 implements MigrationInterface {
  name = 'Webhooks1764000400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id            bigserial PRIMARY KEY,
        owner_id      bigint        NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        url           varchar(2048) NOT NULL,
        events        text[]        NOT NULL CHECK (cardinality(events) > 0),
        secret        varchar(200)  NOT NULL,
        created_at    timestamptz   NOT NULL,
        failing_since timestamptz,
        disabled_at   timestamptz
      )`);
    await q.query(`CREATE INDEX webhook_endpoints_owner_idx ON webhook_endpoints (owner_id, id)`);
    await q.query(`
      CREATE TABLE webhook_events (
        id               uuid PRIMARY KEY,
        type             varchar(40) NOT NULL,
        subject_owner_id bigint,
        endpoint_id      bigint REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        body             text        NOT NULL,
        created_at       timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id               bigserial PRIMARY KEY,
        event_id         uuid        NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
        endpoint_id      bigint      NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        status           varchar(10) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts         integer     NOT NULL DEFAULT 0,
        last_status_code integer,
        last_error       varchar(1000),
        next_attempt_at  timestamptz,
        created_at       timestamptz NOT NULL,
        delivered_at     timestamptz,
        UNIQUE (event_id, endpoint_id)
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_events`);
    await q.query(`DROP TABLE webhook_endpoints`);
  }
}

import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EventName, EventOutbox, OutboxEvent } from '@petstore/application';
import { heldWrite } from '../../database/session/held-write';
import { TransactionHost } from '../../database/transaction-host';

/** An event of the outbox, held (TransactionHost.hold). */
const INSERT = heldWrite({
  verb: 'insert',
  table: 'webhook_events',
  params: 6,
  sql: (p) => `INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)})`,
});

/*
 * Fixed SQL run straight on pg by the transaction host: rows map straight to events. The table (`webhook_events`,
 * named when webhooks were its only reader) is the one its migrations create.
 */
const COLUMNS = `id, type, subject_owner_id, endpoint_id, body, created_at`;
const FIND_BY_ID = `SELECT ${COLUMNS} FROM webhook_events WHERE id = $1`;

/** A row of `webhook_events` as pg returns it (bigint ids as text). */
interface OutboxEventRow {
  id: string;
  type: EventName;
  subject_owner_id: string | null;
  endpoint_id: string | null;
  body: string;
  created_at: Date;
}

const toOutboxEvent = (row: OutboxEventRow): OutboxEvent => ({
  id: row.id,
  type: row.type,
  subjectOwnerId: row.subject_owner_id === null ? null : Number(row.subject_owner_id),
  endpointId: row.endpoint_id === null ? null : Number(row.endpoint_id),
  body: row.body,
  createdAt: row.created_at,
});

/** The outbox table: an event is written with the change it reports, in the change's transaction. */
@Injectable()
export class PgEventOutbox extends EventOutbox {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  nextId(): string {
    return randomUUID();
  }

  /**
   * One INSERT for every event, held (TransactionHost.hold: sent with the change's own writes, in one statement, at
   * the commit; its id is a new UUID and it references nothing, so it cannot fail but by a bug). Its consumers
   * (webhooks' fan-out job) follow in the same transaction.
   */
  async add(event: OutboxEvent): Promise<void> {
    this.host.requireTransaction('An event is recorded');
    await this.host.hold(INSERT, [
      event.id,
      event.type,
      event.subjectOwnerId,
      event.endpointId,
      event.body,
      event.createdAt,
    ]);
  }

  async findById(id: string): Promise<OutboxEvent | null> {
    const [row] = await this.host.query<OutboxEventRow>(FIND_BY_ID, [id]);
    return row ? toOutboxEvent(row) : null;
  }
}

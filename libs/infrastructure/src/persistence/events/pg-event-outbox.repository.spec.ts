import { describeEventOutboxContract } from '@petstore/application/testing';
import { resetDatabase } from '@petstore/testing';
import { pgRepositories, useTestDatabase } from '../../../test/support/real-database';
import { PgEventLog } from './pg-event-log.repository';
import { PgEventOutbox } from './pg-event-outbox.repository';
import { settledEvents } from '../../../test/support/settled-events';

describe('The event outbox on PostgreSQL (real database)', () => {
  const db = useTestDatabase();

  describeEventOutboxContract('PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    const { uow } = pgRepositories(db.host);
    return {
      uow,
      outbox: new PgEventOutbox(db.host),
      log: new PgEventLog(db.host),
      settle: () => settledEvents(db.dataSource),
    };
  });
});

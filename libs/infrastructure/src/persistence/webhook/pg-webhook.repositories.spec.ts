import { anAccount, describeWebhookRepositoryContract } from '@petstore/application/testing';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../database/data-source';
import { TransactionHost, TypeOrmUnitOfWork } from '../../database/transaction-host';
import { PgAccountRepository } from '../account/pg-account.repository';
import { PgWebhookDeliveryRepository, PgWebhookEndpointRepository } from './pg-webhook.repositories';

describe('The webhook repositories on PostgreSQL (real database)', () => {
  let dataSource: DataSource;
  let host: TransactionHost;

  beforeAll(async () => {
    dataSource = await createDataSource(await testDatabaseUrl()).initialize();
    host = new TransactionHost(dataSource);
  });
  afterAll(() => dataSource.destroy());

  describeWebhookRepositoryContract('SQL on PostgreSQL', async () => {
    await resetDatabase(dataSource);
    const accounts = new PgAccountRepository(host);
    return {
      uow: new TypeOrmUnitOfWork(host),
      endpoints: new PgWebhookEndpointRepository(host),
      deliveries: new PgWebhookDeliveryRepository(host),
      newAccountId: async (role) =>
        (await (role === 'admin' ? anAccount().admin() : anAccount()).saveIn({ accounts })).id,
      // The outbox's own adapter also sends the event's fan-out job (pg-boss, covered by the HTTP tests):
      // the contract needs only the row.
      addEvent: async (event) => {
        await host.query(
          `INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [event.id, event.type, event.subjectOwnerId, event.endpointId, event.body, event.createdAt],
        );
      },
    };
  });
});

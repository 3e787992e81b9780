import { Message } from '@petstore/domain';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import {
  createDataSource,
  MESSAGES_CHANNEL,
  PgMessageNotifications,
  TransactionHost,
  TypeOrmMessageRepository,
} from '@petstore/infrastructure';
import { DataSource } from 'typeorm';

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('PgMessageNotifications (LISTEN/NOTIFY, real database)', () => {
  let url: string;
  let dataSource: DataSource;
  let host: TransactionHost;
  let messages: TypeOrmMessageRepository;
  let ownerId: number;
  let listener: PgMessageNotifications | undefined;
  const logger = { log: jest.fn(), warn: jest.fn(), error: jest.fn() };

  beforeAll(async () => {
    url = await testDatabaseUrl();
    await resetDatabase(url);
    dataSource = await createDataSource(url).initialize();
    host = new TransactionHost(dataSource);
    messages = new TypeOrmMessageRepository(host);
    const rows: Array<{ id: string }> = await dataSource.query(`INSERT INTO accounts (name, role) VALUES ('N', 'customer') RETURNING id`);
    ownerId = Number(rows[0].id);
  });

  afterEach(async () => {
    await listener?.stop();
    listener = undefined;
  });

  afterAll(() => dataSource.destroy());

  const queue = (text: string) =>
    messages.add(Message.queue({ id: messages.nextId(), text, ownerId, now: new Date() }));
  const listening = async () =>
    Number(
      (await dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = $1 AND pid <> pg_backend_pid()`, [
        `LISTEN "${MESSAGES_CHANNEL}"`,
      ]))[0].n,
    ) === 1;

  it('wakes up when a message is queued, by any connection', async () => {
    let wakeUps = 0;
    listener = new PgMessageNotifications(url, logger as never, 50);
    listener.start(() => wakeUps++);
    await until(listening);
    await until(() => wakeUps >= 1); // once on connecting: messages may have come meanwhile
    const before = wakeUps;
    await queue('hello');
    await until(() => wakeUps > before);
  });

  it('notifies only once the queueing transaction commits, and not at all when it rolls back', async () => {
    let wakeUps = 0;
    listener = new PgMessageNotifications(url, logger as never, 50);
    listener.start(() => wakeUps++);
    await until(listening);
    await until(() => wakeUps >= 1);
    const before = wakeUps;
    await expect(
      host.transaction(async () => {
        await queue('rolled back');
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    await queue('committed');
    await until(() => wakeUps > before);
    expect(wakeUps).toBe(before + 1);
  });

  it('reconnects after losing its connection, and hears later messages', async () => {
    let wakeUps = 0;
    listener = new PgMessageNotifications(url, logger as never, 50);
    listener.start(() => wakeUps++);
    await until(listening);
    await dataSource.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = $1 AND pid <> pg_backend_pid()`, [
      `LISTEN "${MESSAGES_CHANNEL}"`,
    ]);
    await until(() => logger.warn.mock.calls.length > 0);
    await until(listening);
    const before = wakeUps;
    await queue('after the reconnect');
    await until(() => wakeUps > before);
  });

  it('stops listening on stop()', async () => {
    listener = new PgMessageNotifications(url, logger as never, 50);
    listener.start(() => undefined);
    await until(listening);
    await listener.stop();
    await until(async () => !(await listening()));
  });
});

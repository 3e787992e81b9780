import { createHash } from 'node:crypto';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../database/data-source';
import { DatabasePool } from '../../database/database-pool';
import { TransactionHost } from '../../database/transaction-host';
import { FIND_API_KEY_BY_HASH_SQL, PgApiKeyRepository } from './pg-api-key.repository';

const KEYS = 200_000;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe(`PgApiKeyRepository with ${KEYS} keys (real database)`, () => {
  let dataSource: DataSource;
  let pool: DatabasePool;
  let keys: PgApiKeyRepository;
  let accountId: number;

  beforeAll(async () => {
    const url = await testDatabaseUrl();
    await resetDatabase(url);
    dataSource = await createDataSource(url).initialize();
    pool = new DatabasePool(url);
    keys = new PgApiKeyRepository(new TransactionHost(pool));
    const [account] = await dataSource.query(
      `INSERT INTO accounts (name, role) VALUES ('Many keys', 'customer') RETURNING id`,
    );
    accountId = Number(account.id);
    // Key i is the text of i, hashed as the service hashes keys; every 10th is revoked.
    // Seeded on a connection of its own: on a busy machine the one statement may outlast the pool's time bounds.
    const seeder = new Client({ connectionString: url });
    await seeder.connect();
    try {
      await seeder.query(
        `INSERT INTO api_keys (account_id, prefix, hash, revoked_at)
         SELECT $1, 'psk_' || lpad(i::text, 8, '0'), encode(sha256(convert_to(i::text, 'UTF8')), 'hex'),
                CASE WHEN i % 10 = 0 THEN now() END
           FROM generate_series(1, ${KEYS}) AS i`,
        [accountId],
      );
      await seeder.query('ANALYZE api_keys');
    } finally {
      await seeder.end();
    }
  });
  afterAll(async () => {
    await pool.close();
    await dataSource.destroy();
  });

  it('finds a key and its account by hash, revoked or not, and nothing for an unknown hash', async () => {
    const found = await keys.findByHash(sha256('123457'));
    expect(found?.key.prefix).toBe('psk_00123457');
    expect(found?.key.isRevoked).toBe(false);
    expect(found?.key.toSnapshot()).toEqual({
      id: expect.any(Number),
      accountId,
      prefix: 'psk_00123457',
      hash: sha256('123457'),
      // Inserted without them, as every key before scopes was: no name, full, no expiry.
      name: null,
      scopes: ['full'],
      expiresAt: null,
      createdAt: expect.any(Date),
      lastUsedAt: null,
      revokedAt: null,
      bootstrap: false,
    });
    expect(found?.account.toSnapshot()).toEqual({
      id: accountId,
      name: 'Many keys',
      role: 'customer',
      createdAt: expect.any(Date),
    });
    const revoked = await keys.findByHash(sha256('123450'));
    expect(revoked?.key.isRevoked).toBe(true);
    expect(revoked?.key.toSnapshot().revokedAt).toEqual(expect.any(Date));
    expect(await keys.findByHash(sha256('not a stored key'))).toBeNull();
  });

  it('looks the key up through the unique index on hash, not by scanning api_keys', async () => {
    const [hashIndex] = await dataSource.query(
      `SELECT indexname FROM pg_indexes
        WHERE tablename = 'api_keys' AND indexdef LIKE 'CREATE UNIQUE INDEX%' AND indexdef LIKE '%(hash)'`,
    );
    expect(hashIndex?.indexname).toEqual(expect.any(String));
    // The very statement findByHash runs, with its parameter.
    const [{ 'QUERY PLAN': plan }] = await dataSource.query(`EXPLAIN (FORMAT JSON) ${FIND_API_KEY_BY_HASH_SQL}`, [
      sha256('123457'),
    ]);
    const nodes = nodesOf(plan[0].Plan as PlanNode).filter((node) => node['Relation Name'] === 'api_keys');
    expect(nodes.map((node) => [node['Node Type'], node['Index Name']])).toEqual([['Index Scan', hashIndex.indexname]]);
  });
});

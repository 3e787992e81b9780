import { useTestDatabase } from '../../../test/support/real-database';
import { PgServiceSecrets } from './pg-service-secrets';

describe('PgServiceSecrets (real PostgreSQL)', () => {
  const db = useTestDatabase({ reset: true });

  it('makes a secret once: every caller, at once or later, gets the same 32 bytes; names are apart', async () => {
    const instances = [new PgServiceSecrets(db.host), new PgServiceSecrets(db.host), new PgServiceSecrets(db.host)];
    const first = await Promise.all(instances.map((secrets) => secrets.get('event-positions')));
    expect(first[0]).toHaveLength(32);
    for (const secret of first) expect(secret.equals(first[0])).toBe(true);
    expect((await instances[1].get('event-positions')).equals(first[0])).toBe(true);
    const other = await instances[2].get('another');
    expect(other.equals(first[0])).toBe(false);
    const rows = await db.dataSource.query(`SELECT name FROM service_secrets ORDER BY name`);
    expect(rows).toEqual([{ name: 'another' }, { name: 'event-positions' }]);
  });
});

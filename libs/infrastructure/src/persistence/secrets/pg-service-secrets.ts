import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ServiceSecrets } from '@petstore/application';
import { TransactionHost } from '../../database/transaction-host';

/**
 * The secret of that name, made now (`$2`, 32 random bytes) if the database has none: the first instance to ask
 * makes it, every other one (at once, or later) reads that one (the INSERT's row is not yet visible to the same
 * statement's SELECT, hence the two branches).
 */
const SECRET_BY_NAME = `WITH made AS (
    INSERT INTO service_secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING secret
  )
  SELECT secret FROM made UNION ALL SELECT secret FROM service_secrets WHERE name = $1 LIMIT 1`;

/** `service_secrets` (ServiceSecretsTable1796000950000): read once by whoever needs one, at start-up. */
@Injectable()
export class PgServiceSecrets extends ServiceSecrets {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async get(name: string): Promise<Buffer> {
    // Two instances making it at once: the second's INSERT waits for the first's, then does nothing, and its SELECT
    // ran on a snapshot from before that commit (no row): asked again, it reads the first's.
    for (let attempt = 0; attempt < 3; attempt++) {
      const [row] = await this.host.query<{ secret: Buffer }>(SECRET_BY_NAME, [name, randomBytes(32)]);
      if (row) return row.secret;
    }
    throw new Error(`The service secret "${name}" could not be read or made.`);
  }
}

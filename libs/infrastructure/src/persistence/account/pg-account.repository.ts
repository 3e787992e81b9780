import { Injectable } from '@nestjs/common';
import { AccountRepository } from '@petstore/application';
import { Account, Role } from '@petstore/domain';
import { SequenceBlocks } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';

/*
 * Fixed SQL run straight on pg by the transaction host (no query building, no entity hydration):
 * rows map straight to domain objects. The table is the one its migrations create.
 */
const COLUMNS = `id, name, role, created_at`;
const FIND_BY_ID = `SELECT ${COLUMNS} FROM accounts WHERE id = $1`;
const LOCK_BY_ID = `SELECT id FROM accounts WHERE id = $1 FOR UPDATE`;
const INSERT = `INSERT INTO accounts (${COLUMNS}) VALUES ($1, $2, $3, $4)`;

/** A row of `accounts` as pg returns it (bigint as text). */
interface AccountRow {
  id: string;
  name: string;
  role: Role;
  created_at: Date;
}

const toAccount = (row: AccountRow): Account =>
  Account.restore({ id: Number(row.id), name: row.name, role: row.role, createdAt: row.created_at });

/** Accounts, in fixed SQL through TransactionHost (the style of every repository: architecture.md). */
@Injectable()
export class PgAccountRepository extends AccountRepository {
  private readonly ids = new SequenceBlocks('accounts');

  constructor(private readonly host: TransactionHost) {
    super();
  }

  async findById(id: number): Promise<Account | null> {
    const [row] = await this.host.query<AccountRow>(FIND_BY_ID, [id]);
    return row ? toAccount(row) : null;
  }

  async lock(id: number): Promise<boolean> {
    this.host.requireTransaction('lock');
    const rows = await this.host.query(LOCK_BY_ID, [id]);
    return rows.length > 0;
  }

  nextId(): Promise<number> {
    return this.ids.take(this.host);
  }

  async add(account: Account): Promise<void> {
    const { id, name, role, createdAt } = account.toSnapshot();
    await this.host.query(INSERT, [id, name, role, createdAt]);
  }
}

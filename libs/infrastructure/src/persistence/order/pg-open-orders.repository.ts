import { Injectable } from '@nestjs/common';
import { OpenOrders } from '@petstore/application';
import { TransactionHost } from '../../database/transaction-host';

/*
 * The catalogue's question about a pet's orders (OpenOrders), answered from the orders table, which ordering owns: the
 * catalogue imports nothing of ordering, and its module binds this adapter. Fixed SQL through the transaction host.
 */
/** "Open" is `status = 'placed'`: the partial index of the open orders answers it. */
const COUNT_FOR_PET = `SELECT count(*)::int AS count FROM orders WHERE pet_id = $1 AND status = 'placed'`;

@Injectable()
export class PgOpenOrders extends OpenOrders {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async countForPet(petId: number): Promise<number> {
    const [{ count }] = await this.host.query<{ count: number }>(COUNT_FOR_PET, [petId]);
    return count;
  }
}

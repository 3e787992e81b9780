import { Order } from '@petstore/domain';
import { OrderOrmEntity } from './order.orm-entity';

export const OrderMapper = {
  toDomain(row: OrderOrmEntity): Order {
    return Order.restore({
      id: row.id,
      petId: row.petId,
      quantity: row.quantity,
      shipDate: row.shipDate,
      complete: row.complete,
      ownerId: row.ownerId,
    });
  },
  toPersistence(order: Order): OrderOrmEntity {
    const row = new OrderOrmEntity();
    const { id, petId, quantity, shipDate, complete, ownerId } = order.toSnapshot();
    row.id = id;
    row.petId = petId;
    row.quantity = quantity;
    row.shipDate = shipDate;
    row.complete = complete;
    row.ownerId = ownerId;
    return row;
  },
};

import { Module } from '@nestjs/common';
import {
  CancelOrder,
  CompleteOrder,
  ExpireHeldOrders,
  OrderCommand,
  OrderHoldSettings,
  OrderQueries,
  OrderRepository,
  PlaceOrder,
} from '@petstore/application';
import { PgOrderRepository } from '@petstore/infrastructure';
import { AccountRepositoryModule } from '../accounts/accounts.module';
import { CatalogueRepositoriesModule } from '../catalogue/catalogue-repositories.module';
import { ConfigPart } from '../config/app-config';
import { configToken } from '../config/config.module';
import { EventsModule } from '../events/events.module';
import { SliceJobs } from '../jobs/scheduled-jobs';
import { OrdersController } from './orders.controller';
import { IdempotencyModule } from '../idempotency/idempotency.module';

/** Ordering's scheduled job: open orders past ORDER_HOLD_MINUTES are cancelled. */
export const ORDERING_JOBS: SliceJobs = {
  scheduled: [{ name: 'expire-held-orders', cron: '* * * * *', useCase: ExpireHeldOrders }],
};

/**
 * Ordering: orders, the holds they put on stock (the catalogue's StockReservations: ordering uses the catalogue, never
 * the reverse), the hold limit (each customer's account row locked through AccountRepository) and the orders' events.
 * Its controller is OrderingHttpModule, which the assembly adds for the `http` role.
 */
@Module({
  imports: [CatalogueRepositoriesModule, AccountRepositoryModule, EventsModule],
  providers: [
    { provide: OrderRepository, useClass: PgOrderRepository },
    {
      provide: OrderHoldSettings,
      useFactory: (ordering: ConfigPart<'ordering'>) =>
        new OrderHoldSettings(ordering.maxOpenUnitsPerCustomer, ordering.orderHoldMinutes),
      inject: [configToken('ordering')],
    },
    OrderCommand,
    PlaceOrder,
    CompleteOrder,
    CancelOrder,
    OrderQueries,
    ExpireHeldOrders,
  ],
  exports: [PlaceOrder, CompleteOrder, CancelOrder, OrderQueries],
})
export class OrderingModule {}

/** `/store/orders` (the `http` role). */
@Module({ imports: [OrderingModule, IdempotencyModule], controllers: [OrdersController] })
export class OrderingHttpModule {}

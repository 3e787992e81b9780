import { Module } from '@nestjs/common';
import { CancelOrder, CompleteOrder, ExpireHeldOrders, OrderQueries, PlaceOrder } from '@petstore/application';
import { CatalogueRepositoriesModule } from '../catalogue/catalogue-repositories.module';
import { SliceJobs } from '../jobs/scheduled-jobs';
import { OrdersController } from './orders.controller';
import { IdempotencyModule } from '../idempotency/idempotency.module';

/** Ordering's scheduled job: open orders past ORDER_HOLD_MINUTES are cancelled. */
export const ORDERING_JOBS: SliceJobs = {
  scheduled: [{ name: 'expire-held-orders', cron: '* * * * *', useCase: ExpireHeldOrders }],
};

/**
 * Ordering: orders and the holds they put on stock (with the catalogue's repositories and StockCommand).
 * Its controller is OrderingHttpModule, which the assembly adds for the `http` role.
 */
@Module({
  imports: [CatalogueRepositoriesModule],
  providers: [PlaceOrder, CompleteOrder, CancelOrder, OrderQueries, ExpireHeldOrders],
  exports: [PlaceOrder, CompleteOrder, CancelOrder, OrderQueries],
})
export class OrderingModule {}

/** `/store/orders` (the `http` role). */
@Module({ imports: [OrderingModule, IdempotencyModule], controllers: [OrdersController] })
export class OrderingHttpModule {}

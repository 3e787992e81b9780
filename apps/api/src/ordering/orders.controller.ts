import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CancelOrder, CompleteOrder, OrderQueries, PlaceOrder, Precondition } from '@petstore/application';
import type { Account, Order } from '@petstore/domain';
import type { FastifyReply } from 'fastify';
import { Auth, CurrentAccount } from '../common/auth/auth.decorators';
import { Conditional, IfMatch } from '../common/conditional/conditional.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { pageRequest } from '../common/pagination/cursor';
import { ApiNextPageLink, Paginated } from '../common/pagination/paginated';
import { ParseIdPipe } from '../common/validation/parse-id.pipe';
import { defaultOf } from '../config/app-config';
import { NewOrderDto, OrderDto, OrderQueryDto, OrderUpdateDto } from '../resources/order.dto';
import { ReadsFromReplica } from '../database/replica-reads';

@ApiTags('store')
@Auth()
@Controller('store/orders')
export class OrdersController {
  constructor(
    private readonly placeOrder: PlaceOrder,
    private readonly completeOrder: CompleteOrder,
    private readonly cancelOrder: CancelOrder,
    private readonly queries: OrderQueries,
  ) {}

  @Post()
  @ApiOperation({
    operationId: 'placeOrder',
    summary: 'Place an order for an available pet',
    description:
      "Takes `quantity` units from the pet's stock in one transaction; " +
      'when the stock reaches 0 the pet becomes `pending`. ' +
      'Concurrent orders never oversell. Send `Idempotency-Key` to make a retry safe. ' +
      'A customer may hold at most `MAX_OPEN_UNITS_PER_CUSTOMER` units ' +
      `(default ${defaultOf('ordering', 'maxOpenUnitsPerCustomer')}; administrators exempt) in open ` +
      'orders (status `placed`), concurrent orders included: past it, 409 `hold_limit_reached`. ' +
      `An order still open \`ORDER_HOLD_MINUTES\` (default ${defaultOf('ordering', 'orderHoldMinutes')}, a day) ` +
      'after it was placed expires: the ' +
      'service withdraws it with the same effects as a cancel by its owner (its units go back to stock, a `pending` ' +
      'pet becomes `available`), and the order stays with `status: expired`.',
  })
  @ApiCreatedResponse({
    type: OrderDto,
    headers: { Location: { description: "The new order's URL.", schema: { type: 'string' } } },
  })
  @ApiErrors({
    409:
      'The pet is not `available` (`pet_not_available`), has fewer units in stock than ordered ' +
      '(`insufficient_stock`), or the customer would hold more than `MAX_OPEN_UNITS_PER_CUSTOMER` units in open ' +
      'orders (`hold_limit_reached`).',
    422: 'No pet has that `petId` (`unknown_pet`).',
  })
  async place(
    @Body() body: NewOrderDto,
    @CurrentAccount() account: Account,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<OrderDto> {
    const order = await this.placeOrder.execute({
      petId: body.petId,
      quantity: body.quantity,
      shipDate: body.shipDate === undefined ? null : new Date(body.shipDate),
      by: account,
    });
    void reply.header('Location', `/store/orders/${order.id}`);
    return OrderDto.from(order);
  }

  @ReadsFromReplica()
  @Get()
  @ApiOperation({
    operationId: 'listOrders',
    summary: 'List orders',
    description:
      'A customer sees only its own orders, an administrator all of them; cancelled and expired orders included ' +
      '(filter with `status`).',
  })
  @ApiOkResponse({ type: [OrderDto], headers: ApiNextPageLink })
  async list(@Query() query: OrderQueryDto, @CurrentAccount() account: Account): Promise<Paginated<OrderDto>> {
    const request = pageRequest(query);
    const filter = query.toFilter();
    if (!filter) return new Paginated<OrderDto>([], null, request.limit);
    return Paginated.of(await this.queries.list(filter, account, request), request, OrderDto.from);
  }

  @ReadsFromReplica()
  @Get(':orderId')
  @ApiOperation({
    operationId: 'getOrder',
    summary: 'Get an order',
    description: "Another customer's order is a 404. Cancelled and expired orders stay readable, with their status.",
  })
  @ApiOkResponse({ type: OrderDto })
  @Conditional('order')
  async get(@Param('orderId', ParseIdPipe) id: number, @CurrentAccount() account: Account): Promise<OrderDto> {
    return OrderDto.from(await this.queries.get(id, account));
  }

  @Patch(':orderId')
  @Auth('admin')
  @ApiOperation({
    operationId: 'completeOrder',
    summary: 'Complete (fulfil) an open order',
    description:
      'Sets `complete: true`, and the ship date when given ' +
      '(else keeps the one given when ordering, else the completion time). ' +
      'The pet becomes `sold` when it is `pending`, has no stock left and no other open order. ' +
      '`complete: false` is refused (400).',
  })
  @ApiOkResponse({ type: OrderDto })
  @ApiErrors({
    409:
      'The order is already complete (`order_already_complete`), or was cancelled or has expired ' +
      '(`order_already_cancelled`).',
  })
  @Conditional('order')
  async complete(
    @Param('orderId', ParseIdPipe) id: number,
    @Body() body: OrderUpdateDto,
    @IfMatch(OrderDto.from) precondition?: Precondition<Order>,
  ): Promise<OrderDto> {
    const order = await this.completeOrder.execute({
      orderId: id,
      shipDate: body.shipDate === undefined ? null : new Date(body.shipDate),
      precondition,
    });
    return OrderDto.from(order);
  }

  @Delete(':orderId')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'cancelOrder',
    summary: 'Cancel an open order',
    description:
      "The owner or an administrator; another customer's order is a 404. " +
      'The units go back to stock, once, and a `pending` pet ' +
      'becomes `available`; the order stays, with `status: cancelled` (GET shows it, lists filter by status).',
  })
  @ApiNoContentResponse({ description: 'Cancelled.' })
  @ApiErrors({
    409:
      'The order is complete and cannot be cancelled (`order_already_complete`), was cancelled already or has ' +
      'expired (`order_already_cancelled`), or its units would lift the stock ' +
      'above 2,147,483,647 (`stock_limit_exceeded`; lower the stock first).',
  })
  @Conditional('order')
  async cancel(
    @Param('orderId', ParseIdPipe) id: number,
    @CurrentAccount() account: Account,
    @IfMatch(OrderDto.from) precondition?: Precondition<Order>,
  ): Promise<void> {
    await this.cancelOrder.execute({ orderId: id, by: account, precondition });
  }
}

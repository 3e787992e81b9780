import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Precondition, SetStock, StockLevel, StockQueries } from '@petstore/application';
import { Auth } from '../common/auth/auth.decorators';
import { CachedRead } from '../common/conditional/catalogue-cache';
import { Conditional, ConditionalPage, IfMatch } from '../common/conditional/conditional.decorator';
import { pageRequest } from '../common/pagination/cursor';
import { ApiNextPageLink, Paginated } from '../common/pagination/paginated';
import { ParseIdPipe } from '../common/validation/parse-id.pipe';
import { InventoryItemDto, StockQueryDto, InventoryUpdateDto } from '../resources/inventory.dto';
import { ReadsFromReplica } from '../database/replica-reads';

/**
 * The pets' stock over HTTP. The file, the class, the path `/store/inventory`, the operation ids and the
 * `InventoryItem`/`InventoryUpdate` schemas keep the specification's word; everything behind them says stock.
 */
@ApiTags('store')
@Auth()
@Controller('store/inventory')
export class InventoryController {
  constructor(
    private readonly setStock: SetStock,
    private readonly queries: StockQueries,
  ) {}

  @ReadsFromReplica()
  @Get()
  @ApiOperation({
    operationId: 'listInventory',
    summary: 'List the stock of every pet',
    description: 'Ordered by pet id.',
  })
  @ApiOkResponse({ type: [InventoryItemDto], headers: ApiNextPageLink })
  @ConditionalPage()
  @CachedRead('stock', 'pets')
  async list(@Query() query: StockQueryDto): Promise<Paginated<InventoryItemDto>> {
    const request = pageRequest(query);
    return Paginated.of(await this.queries.list({ statuses: query.status }, request), request, InventoryItemDto.from);
  }

  @ReadsFromReplica()
  @Get(':petId')
  @ApiOperation({
    operationId: 'getInventoryItem',
    summary: 'Get the stock of a pet',
    description: "The entry's status is the pet's.",
  })
  @ApiOkResponse({ type: InventoryItemDto })
  @Conditional('stock entry')
  @CachedRead('stock', 'pets')
  async get(@Param('petId', ParseIdPipe) petId: number): Promise<InventoryItemDto> {
    return InventoryItemDto.from(await this.queries.get(petId));
  }

  @Put(':petId')
  @Auth('admin')
  @ApiOperation({
    operationId: 'updateInventoryItem',
    summary: 'Set the stock of a pet',
    description:
      'Sets the count (not a delta). Above 0 the pet becomes `available`; at 0 an `available` pet becomes `pending` ' +
      'while it has open orders, else `sold`; a `pending` or `sold` pet keeps its status.',
  })
  @ApiOkResponse({ type: InventoryItemDto })
  @Conditional('stock entry')
  async update(
    @Param('petId', ParseIdPipe) petId: number,
    @Body() body: InventoryUpdateDto,
    @IfMatch(InventoryItemDto.from) precondition?: Precondition<StockLevel>,
  ): Promise<InventoryItemDto> {
    return InventoryItemDto.from(await this.setStock.execute({ petId, quantity: body.quantity, precondition }));
  }
}

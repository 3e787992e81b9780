import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { LIMITS, Order, ORDER_STATUSES, OrderStatus } from '@petstore/domain';
import { Equals, IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { defaultOf } from '../config/app-config';
import { IsDateTime } from '../common/validation/date-time';
import { IsIdNumber, IsPositiveInt64String } from '../common/validation/int64';
import { IsOmittable } from '../common/validation/optional';
import { QueryBoolean, QueryList } from '../common/validation/query-transforms';
import { versionProperty } from './version.property';

@ApiSchema({ name: 'NewOrder', description: 'Input for placing an order: some units of one available pet.' })
export class NewOrderDto {
  @ApiProperty({
    description: 'ID of the animal to order; it must exist (else 422 `unknown_pet`) and be `available`.',
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    example: 1,
  })
  @IsIdNumber()
  petId: number;

  @ApiProperty({
    description:
      `Number of units (${LIMITS.orderQuantity.min}–${LIMITS.orderQuantity.max}); ` + 'no more than are in stock.',
    type: 'integer',
    format: 'int32',
    minimum: LIMITS.orderQuantity.min,
    maximum: LIMITS.orderQuantity.max,
    example: 1,
  })
  @IsInt()
  @Min(LIMITS.orderQuantity.min)
  @Max(LIMITS.orderQuantity.max)
  quantity: number;

  @ApiPropertyOptional({
    description: 'Expected ship date, an ISO 8601 date-time with a time zone; not more than a day in the past.',
    type: 'string',
    format: 'date-time',
    maxLength: 35,
    example: '2026-11-21T10:00:00.000Z',
  })
  @IsOmittable()
  @IsDateTime()
  shipDate?: string;
}

@ApiSchema({
  name: 'OrderUpdate',
  description:
    'Fulfils an open order. `complete` must be `true`: a completed order never becomes open again, and an open order ' +
    "is withdrawn with DELETE, so `complete: false` is refused (400 `validation_failed`) whatever the order's state.",
})
export class OrderUpdateDto {
  @ApiProperty({ description: 'Must be `true`.', type: 'boolean', enum: [true], example: true })
  @Equals(true, { message: 'complete must be true: an order can only be completed (cancel an open order with DELETE)' })
  complete: true;

  @ApiPropertyOptional({
    description:
      'The actual ship date (ISO 8601 date-time). ' +
      'Default: the ship date given when ordering, else the completion time.',
    type: 'string',
    format: 'date-time',
    maxLength: 35,
    example: '2026-11-21T10:00:00.000Z',
  })
  @IsOmittable()
  @IsDateTime()
  shipDate?: string;
}

const ORDER_STATUS_PROPERTY = {
  description:
    'Where the order stands: `placed` (open: its units are held), `completed` (fulfilled), `cancelled` (by its ' +
    'owner or an administrator) or `expired` (its hold ran out). Only a `placed` order changes; the others are ' +
    'kept as records. An addition to the specification.',
  enum: ORDER_STATUSES,
  enumName: 'OrderStatus',
  example: 'placed',
};

/**
 * The specification marks no field of Order as required; this service always sends id, quantity and complete. Its
 * additions (status and the two times) are required: they are always sent.
 */
@ApiSchema({
  name: 'Order',
  description:
    "A customer's order for units of one pet. The account that placed it is kept but never shown. " +
    `An order still open \`ORDER_HOLD_MINUTES\` (default ${defaultOf('ordering', 'orderHoldMinutes')}) ` +
    'after it was placed expires (see `placeOrder`). Orders are never deleted: a cancelled or expired order stays ' +
    'readable, with its status.',
})
export class OrderDto {
  @ApiPropertyOptional({
    description: 'Unique order identifier (always present).',
    type: 'integer',
    format: 'int64',
    example: 10,
  })
  id?: number;

  @ApiPropertyOptional({
    description:
      'ID of the animal in the order. ' +
      'Absent only when that pet has since been deleted (a completed order stays as history).',
    type: 'integer',
    format: 'int64',
    example: 1,
  })
  petId?: number;

  @ApiPropertyOptional({
    description: 'Number of units ordered (always present).',
    type: 'integer',
    format: 'int32',
    minimum: LIMITS.orderQuantity.min,
    maximum: LIMITS.orderQuantity.max,
    example: 1,
  })
  quantity?: number;

  @ApiPropertyOptional({
    description:
      'Expected ship date while open, actual once complete (ISO 8601, UTC). Absent while open when none was given.',
    type: 'string',
    format: 'date-time',
    maxLength: 35,
    example: '2026-11-21T10:00:00.000Z',
  })
  shipDate?: string;

  @ApiPropertyOptional({ description: 'Whether the order has been fulfilled (always present).', example: false })
  complete?: boolean;

  @ApiProperty({ ...ORDER_STATUS_PROPERTY, readOnly: true })
  status: OrderStatus;

  @ApiProperty({
    description: 'When the order was placed (ISO 8601, UTC). An addition to the specification.',
    type: 'string',
    format: 'date-time',
    readOnly: true,
    example: '2026-11-21T10:00:00.000Z',
  })
  createdAt: string;

  @ApiProperty({
    description: 'When the order reached its current status (its creation while `placed`). An addition.',
    type: 'string',
    format: 'date-time',
    readOnly: true,
    example: '2026-11-21T10:00:00.000Z',
  })
  statusChangedAt: string;

  @ApiPropertyOptional(versionProperty('order', 'its status (or its pet deleted)'))
  version?: number;

  static from(order: Order): OrderDto {
    const dto = new OrderDto();
    dto.id = order.id;
    if (order.petId !== null) dto.petId = order.petId;
    dto.quantity = order.quantity;
    if (order.shipDate !== null) dto.shipDate = order.shipDate.toISOString();
    dto.complete = order.isComplete;
    dto.status = order.status;
    dto.createdAt = order.createdAt.toISOString();
    dto.statusChangedAt = order.statusChangedAt.toISOString();
    dto.version = order.version;
    return dto;
  }
}

export class OrderQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description:
      'Only fulfilled (`true`) or only unfulfilled (`false`) orders, as the `complete` field says: `false` includes ' +
      'cancelled and expired orders; `status=placed` lists the open ones.',
    type: 'boolean',
  })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  complete?: boolean;

  @ApiPropertyOptional({
    ...ORDER_STATUS_PROPERTY,
    description: 'Only orders in one of these statuses (comma-separated or repeated).',
    isArray: true,
  })
  @IsOptional()
  @QueryList()
  @IsIn(ORDER_STATUSES, { each: true })
  status?: OrderStatus[];

  @ApiPropertyOptional({ description: 'Only orders of this pet.', type: 'integer', format: 'int64', minimum: 1 })
  @IsOptional()
  @IsString()
  @IsPositiveInt64String()
  petId?: string;

  /**
   * The repository's filter, or null when no order can match: a pet id beyond 2^53 is a valid int64
   * but never issued (it stays a string until here, so that it is not rounded to another id).
   */
  toFilter(): { complete?: boolean; petId?: number; status?: OrderStatus[] } | null {
    const petId = this.petId === undefined ? undefined : Number(this.petId);
    if (petId !== undefined && !Number.isSafeInteger(petId)) return null;
    return { complete: this.complete, petId, status: this.status && [...new Set(this.status)] };
  }
}

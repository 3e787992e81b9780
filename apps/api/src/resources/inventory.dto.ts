import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { StockLevel } from '@petstore/application';
import { LIMITS, PET_STATUSES, PetStatus } from '@petstore/domain';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { QueryList } from '../common/validation/query-transforms';
import { versionProperty } from './version.property';

/** The DTOs are named after the specification's schemas (`InventoryItem`, `InventoryUpdate`): a pet's stock. */
@ApiSchema({ name: 'InventoryItem', description: "The stock entry of one pet; its status is the pet's." })
export class InventoryItemDto {
  @ApiProperty({ description: 'ID of the animal the entry tracks.', type: 'integer', format: 'int64', example: 1 })
  petId: number;

  @ApiProperty({
    description: 'Current stock count.',
    type: 'integer',
    format: 'int32',
    minimum: LIMITS.stockQuantity.min,
    maximum: LIMITS.stockQuantity.max,
    example: 3,
  })
  quantity: number;

  @ApiProperty({ description: "The pet's status.", enum: PET_STATUSES, enumName: 'PetStatus', example: 'available' })
  status: PetStatus;

  @ApiPropertyOptional(versionProperty('entry', "its quantity or of its pet's status"))
  version?: number;

  static from(level: StockLevel): InventoryItemDto {
    const dto = new InventoryItemDto();
    dto.petId = level.petId;
    dto.quantity = level.quantity;
    dto.status = level.status;
    dto.version = level.version;
    return dto;
  }
}

@ApiSchema({
  name: 'InventoryUpdate',
  description:
    'Sets the stock to a count (not a delta). Above 0 the pet becomes `available`; at 0 an `available` pet becomes ' +
    '`pending` while it has open orders, else `sold`; a `pending` or `sold` pet keeps its status.',
})
export class InventoryUpdateDto {
  @ApiProperty({
    description: 'The new stock count.',
    type: 'integer',
    format: 'int32',
    minimum: LIMITS.stockQuantity.min,
    maximum: LIMITS.stockQuantity.max,
    example: 5,
  })
  @IsInt()
  @Min(LIMITS.stockQuantity.min)
  @Max(LIMITS.stockQuantity.max)
  quantity: number;
}

/** The filter of `GET /store/inventory` (listInventory). */
export class StockQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description:
      'Only entries whose pet has one of these statuses; ' +
      'repeat the parameter (`status=available&status=pending`) or separate with commas.',
    enum: PET_STATUSES,
    enumName: 'PetStatus',
    isArray: true,
  })
  @IsOptional()
  @QueryList()
  @IsIn(PET_STATUSES, { each: true })
  status?: PetStatus[];
}

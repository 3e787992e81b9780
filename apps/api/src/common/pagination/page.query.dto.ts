import { ApiPropertyOptional } from '@nestjs/swagger';
import { LIMITS } from '@petstore/domain';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { QueryInteger } from '../validation/query-transforms';

/** `limit` and `cursor`, shared by every list; list queries extend it with their filters. */
export class PageQueryDto {
  @ApiPropertyOptional({
    description: `Items per page (${LIMITS.pageSize.min}–${LIMITS.pageSize.max}).`,
    minimum: LIMITS.pageSize.min,
    maximum: LIMITS.pageSize.max,
    default: LIMITS.pageSize.default,
    type: 'integer',
  })
  @IsOptional()
  @QueryInteger()
  @IsInt()
  @Min(LIMITS.pageSize.min)
  @Max(LIMITS.pageSize.max)
  limit?: number;

  @ApiPropertyOptional({ description: 'Opaque cursor from the previous page\'s `Link: rel="next"` header.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

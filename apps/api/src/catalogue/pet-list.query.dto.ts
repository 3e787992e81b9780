import { ApiPropertyOptional } from '@nestjs/swagger';
import type { PetFilter } from '@petstore/application';
import { LIMITS, PET_STATUSES, PetStatus } from '@petstore/domain';
import { ArrayMaxSize, IsIn, IsOptional, IsString, Length } from 'class-validator';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { IsPositiveInt64String } from '../common/validation/int64';
import { QueryList } from '../common/validation/query-transforms';
import { PET_STATUS_PROPERTY } from '../resources/pet.dto';

/** `GET /pets`: the page and the filters, all of which must hold. */
export class PetListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ ...PET_STATUS_PROPERTY, isArray: true })
  @IsOptional()
  @QueryList()
  @IsIn(PET_STATUSES, { each: true })
  status?: PetStatus[];

  @ApiPropertyOptional({ description: 'Pets of this category.', type: 'integer', format: 'int64', minimum: 1 })
  @IsOptional()
  @IsString()
  @IsPositiveInt64String()
  categoryId?: string;

  @ApiPropertyOptional({
    description: 'Pets whose name contains this text, in any letter case (`%` and `_` are plain characters).',
    minLength: 1,
    maxLength: LIMITS.petName.max,
  })
  @IsOptional()
  @IsString()
  @Length(1, LIMITS.petName.max)
  name?: string;

  @ApiPropertyOptional({
    description:
      `Pets with these ids, comma-separated (\`ids=1,2,3\`), at most ${LIMITS.petIdsFilter.max}. ` +
      'The successor of `GET /pets/{petId}`.',
    type: 'integer',
    format: 'int64',
    isArray: true,
  })
  @IsOptional()
  @QueryList()
  @ArrayMaxSize(LIMITS.petIdsFilter.max)
  @IsPositiveInt64String({ each: true })
  ids?: string[];

  /**
   * The repository's filter, or null when no pet can match: an id beyond 2^53 is a valid int64
   * but never issued (ids in the query stay strings until here, so that none is rounded to another).
   */
  toFilter(): PetFilter | null {
    const categoryId = this.categoryId === undefined ? undefined : Number(this.categoryId);
    if (categoryId !== undefined && !Number.isSafeInteger(categoryId)) return null;
    const ids = this.ids && [...new Set(this.ids.map(Number).filter(Number.isSafeInteger))];
    if (ids?.length === 0) return null;
    return { statuses: this.status, categoryId, nameContains: this.name, ids };
  }
}

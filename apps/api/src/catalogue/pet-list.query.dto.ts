import { ApiPropertyOptional } from '@nestjs/swagger';
import type { PetFilter } from '@petstore/application';
import { LIMITS, PET_STATUSES, PetStatus } from '@petstore/domain';
import { ArrayMaxSize, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { IsPositiveInt64String } from '../common/validation/int64';
import { QueryList } from '../common/validation/query-transforms';
import { PET_STATUS_PROPERTY } from '../resources/pet.dto';

const { minRun, max: NAME_FILTER_MAX } = LIMITS.petNameFilter;
/**
 * Letters or digits in a row, as pg_trgm splits words: a run of `minRun` gives the name search a trigram to look up in
 * pets_name_trgm_idx. Without one the search reads every pet (0.5 s at 1,000,000; issue 48, item 5), so it is refused.
 */
const NAME_FILTER_RUN = new RegExp(`[\\p{L}\\p{N}]{${minRun}}`, 'u');

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
    description:
      'Pets whose name contains this text, in any letter case (`%` and `_` are plain characters). It must hold at ' +
      `least ${minRun} letters or digits in a row (\`rex\`, \`50%_off\`; not \`ab\` nor \`a b\`): the search looks ` +
      'them up in an index, and shorter text would read every pet (400 `validation_failed`).',
    minLength: minRun,
    maxLength: NAME_FILTER_MAX,
  })
  @IsOptional()
  @IsString()
  @MaxLength(NAME_FILTER_MAX)
  // Implies the minLength the description declares; one message for a name too short, whatever it holds.
  @Matches(NAME_FILTER_RUN, {
    message: `name must hold at least ${minRun} letters or digits in a row: the name search needs them for its index`,
  })
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

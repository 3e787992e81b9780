import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Category, LIMITS } from '@petstore/domain';
import { IsOptional, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import { IsOmittable } from '../common/validation/optional';
import { versionProperty } from './version.property';

@ApiSchema({ name: 'NewCategory', description: 'Input for creating a category.' })
export class NewCategoryDto {
  @ApiProperty({
    description:
      'Category name (for example a kind of animal); unique after Unicode NFKC normalisation and case folding; ' +
      'no control or invisible characters, letters of one script.',
    minLength: 1,
    maxLength: LIMITS.categoryName.max,
    example: 'Dogs',
  })
  @IsString()
  @Length(LIMITS.categoryName.min, LIMITS.categoryName.max)
  name: string;

  @ApiPropertyOptional({
    description: 'Short description of the category.',
    maxLength: LIMITS.categoryDescription.max,
    example: 'Loyal companions',
  })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.categoryDescription.max)
  description?: string;
}

@ApiSchema({ name: 'CategoryUpdate', description: 'A partial update of a category; `description: null` removes it.' })
export class CategoryUpdateDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: LIMITS.categoryName.max, example: 'Puppies' })
  @IsOmittable()
  @IsString()
  @Length(LIMITS.categoryName.min, LIMITS.categoryName.max)
  name?: string;

  @ApiPropertyOptional({ maxLength: LIMITS.categoryDescription.max, nullable: true, type: 'string' })
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.categoryDescription.max)
  description?: string | null;
}

@ApiSchema({ name: 'Category' })
export class CategoryDto {
  @ApiProperty({ description: 'Unique identifier assigned on creation.', type: 'integer', format: 'int64', example: 1 })
  id: number;

  @ApiProperty({ example: 'Dogs' })
  name: string;

  @ApiPropertyOptional({ description: 'Absent when the category has none.', example: 'Loyal companions' })
  description?: string;

  @ApiPropertyOptional(versionProperty('category', 'its name or description'))
  version?: number;

  static from(category: Category): CategoryDto {
    const dto = new CategoryDto();
    dto.id = category.id;
    dto.name = category.name;
    if (category.description !== null) dto.description = category.description;
    dto.version = category.version;
    return dto;
  }
}

import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions, ApiSchema } from '@nestjs/swagger';
import { LIMITS, Pet, PET_STATUSES, PetStatus } from '@petstore/domain';
import { IsIn, IsString, Length } from 'class-validator';
import { IsIdNumber } from '../common/validation/int64';
import { IsOmittable } from '../common/validation/optional';
import { versionProperty } from './version.property';

/**
 * `PetStatus`, the specification's enum, as one referenced schema. Use it for every status
 * property (no `description` beside it: swagger would copy the first one into the shared schema).
 */
export const PET_STATUS_PROPERTY = {
  enum: PET_STATUSES,
  enumName: 'PetStatus',
  enumSchema: { description: 'The status of a pet and of its inventory entry.' },
} satisfies ApiPropertyOptions;

const NAME_PROPERTY = {
  description: "The animal's name; surrounding spaces are trimmed.",
  minLength: LIMITS.petName.min,
  maxLength: LIMITS.petName.max,
  example: 'Rex',
} satisfies ApiPropertyOptions;

const CATEGORY_ID_PROPERTY = {
  description: 'ID of the category the animal belongs to.',
  type: 'integer',
  format: 'int64',
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  example: 1,
} satisfies ApiPropertyOptions;

@ApiSchema({
  name: 'NewPet',
  description: 'Input for creating a pet. `status` defaults to `available`; a pet created `pending` is on hold.',
})
export class NewPetDto {
  @ApiProperty(NAME_PROPERTY)
  @IsString()
  @Length(LIMITS.petName.min, LIMITS.petName.max)
  name: string;

  @ApiProperty(CATEGORY_ID_PROPERTY)
  @IsIdNumber()
  categoryId: number;

  @ApiPropertyOptional(PET_STATUS_PROPERTY)
  @IsOmittable()
  @IsIn(PET_STATUSES)
  status?: PetStatus;
}

@ApiSchema({
  name: 'PetUpdate',
  description:
    'A partial update of a pet. ' +
    'A status change follows the hand-change rules (else 409 `invalid_status_transition`): ' +
    'available → pending (a hold) always; → available only with stock; ' +
    '→ sold only without open orders (its stock goes to 0); sold → pending never.',
})
export class PetUpdateDto {
  @ApiPropertyOptional(NAME_PROPERTY)
  @IsOmittable()
  @IsString()
  @Length(LIMITS.petName.min, LIMITS.petName.max)
  name?: string;

  @ApiPropertyOptional(CATEGORY_ID_PROPERTY)
  @IsOmittable()
  @IsIdNumber()
  categoryId?: number;

  @ApiPropertyOptional(PET_STATUS_PROPERTY)
  @IsOmittable()
  @IsIn(PET_STATUSES)
  status?: PetStatus;
}

@ApiSchema({ name: 'Pet' })
export class PetDto {
  @ApiProperty({
    description: 'Unique identifier assigned on creation.',
    type: 'integer',
    format: 'int64',
    example: 10,
  })
  id: number;

  @ApiProperty({ description: "The animal's name.", example: 'Rex' })
  name: string;

  @ApiProperty({
    description: 'ID of the category the animal belongs to.',
    type: 'integer',
    format: 'int64',
    example: 1,
  })
  categoryId: number;

  @ApiProperty(PET_STATUS_PROPERTY)
  status: PetStatus;

  @ApiProperty({
    description: 'When the pet was added to the catalogue (ISO 8601, UTC). An addition to the specification.',
    type: 'string',
    format: 'date-time',
    readOnly: true,
    example: '2026-11-21T10:00:00.000Z',
  })
  createdAt: string;

  @ApiPropertyOptional(versionProperty('pet', 'its name, category or status'))
  version?: number;

  static from(pet: Pet): PetDto {
    const { id, name, categoryId, status, createdAt, version } = pet;
    return Object.assign(new PetDto(), { id, name, categoryId, status, createdAt: createdAt.toISOString(), version });
  }
}

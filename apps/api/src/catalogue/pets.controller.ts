import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CreatePet, DeletePet, PetQueries, Precondition, UpdatePet } from '@petstore/application';
import type { Pet } from '@petstore/domain';
import type { FastifyReply } from 'fastify';
import { Auth } from '../common/auth/auth.decorators';
import { CachedRead } from '../common/conditional/catalogue-cache';
import { Conditional, ConditionalPage, IfMatch } from '../common/conditional/conditional.decorator';
import { Deprecated } from '../common/deprecation/deprecated.decorator';
import { ApiOkArrayResponse } from '../openapi/array-schema';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { pageRequest } from '../common/pagination/cursor';
import { ApiNextPageLink, Paginated } from '../common/pagination/paginated';
import { ParseIdPipe } from '../common/validation/parse-id.pipe';
import { NewPetDto, PetDto, PetUpdateDto } from '../resources/pet.dto';
import { PetListQueryDto } from './pet-list.query.dto';
import { ReadsFromReplica } from '../database/replica-reads';

/**
 * When `GET /pets/{petId}` was deprecated (its `Deprecation` header). Fixed: a deprecation does
 * not move. Its sunset is configuration: PET_BY_ID_SUNSET (AppConfig.deprecations.petByIdSunset).
 */
export const PET_BY_ID_DEPRECATED_AT = new Date('2026-11-21T00:00:00Z');

const UNKNOWN_CATEGORY = 'The category does not exist (`unknown_category`).';

@ApiTags('pets')
@Auth()
@Controller('pets')
export class PetsController {
  constructor(
    private readonly createPet: CreatePet,
    private readonly updatePet: UpdatePet,
    private readonly deletePet: DeletePet,
    private readonly queries: PetQueries,
  ) {}

  @Post()
  @Auth('admin')
  @ApiOperation({
    operationId: 'createPet',
    summary: 'Create a pet',
    description: 'Also creates its inventory entry: 1 unit if the pet is created `available`, else 0.',
  })
  @ApiCreatedResponse({
    type: PetDto,
    headers: { Location: { description: "The new pet's URL.", schema: { type: 'string' } } },
  })
  @ApiErrors({ 422: UNKNOWN_CATEGORY })
  async create(@Body() body: NewPetDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<PetDto> {
    const pet = await this.createPet.execute(body);
    void reply.header('Location', `/pets/${pet.id}`);
    return PetDto.from(pet);
  }

  @ReadsFromReplica()
  @Get()
  @ApiOperation({
    operationId: 'listPets',
    summary: 'List pets, filtered',
    description: 'Every filter given must hold.',
  })
  @ApiOkArrayResponse('Pets', PetDto, { description: 'An array of Pet, in id order.', headers: ApiNextPageLink })
  // Parameter descriptions here: a description beside the PetStatus $ref would land in the shared schema.
  @ApiQuery({
    name: 'status',
    required: false,
    description: 'Pets with any of these statuses; repeat the parameter (`status=available&status=pending`).',
  })
  @ApiQuery({ name: 'ids', required: false, style: 'form', explode: false })
  @ConditionalPage()
  @CachedRead('pets')
  async list(@Query() query: PetListQueryDto): Promise<Paginated<PetDto>> {
    const request = pageRequest(query);
    const filter = query.toFilter();
    const page = filter ? await this.queries.list(filter, request) : { items: [], nextAfterId: null };
    return Paginated.of(page, request, PetDto.from);
  }

  @ReadsFromReplica()
  @Get(':petId')
  @Deprecated({
    since: PET_BY_ID_DEPRECATED_AT,
    sunset: 'petByIdSunset',
    successor: ({ petId }) => `/pets?ids=${petId}`,
  })
  @ApiOperation({ operationId: 'getPetById', summary: 'Get a pet' })
  @ApiOkResponse({ type: PetDto })
  @Conditional('pet')
  @CachedRead('pets')
  async get(@Param('petId', ParseIdPipe) id: number): Promise<PetDto> {
    return PetDto.from(await this.queries.get(id));
  }

  @Patch(':petId')
  @Auth('admin')
  @ApiOperation({ operationId: 'updatePet', summary: 'Update a pet: name, category, status' })
  @ApiOkResponse({ type: PetDto })
  @ApiErrors({
    409: 'The status change is not allowed from the current status (`invalid_status_transition`).',
    422: UNKNOWN_CATEGORY,
  })
  @Conditional('pet')
  async update(
    @Param('petId', ParseIdPipe) id: number,
    @Body() body: PetUpdateDto,
    @IfMatch(PetDto.from) precondition?: Precondition<Pet>,
  ): Promise<PetDto> {
    return PetDto.from(await this.updatePet.execute({ id, ...body, precondition }));
  }

  @Delete(':petId')
  @Auth('admin')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deletePet', summary: 'Delete a pet and its inventory entry' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 409: 'The pet has open orders (`pet_has_open_orders`); complete or cancel them first.' })
  @Conditional('pet')
  async remove(
    @Param('petId', ParseIdPipe) id: number,
    @IfMatch(PetDto.from) precondition?: Precondition<Pet>,
  ): Promise<void> {
    await this.deletePet.execute(id, precondition);
  }
}

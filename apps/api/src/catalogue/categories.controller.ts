import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CategoryQueries, CreateCategory, DeleteCategory, Precondition, UpdateCategory } from '@petstore/application';
import type { Category } from '@petstore/domain';
import type { FastifyReply } from 'fastify';
import { Auth } from '../common/auth/auth.decorators';
import { CachedRead } from '../common/conditional/catalogue-cache';
import { Conditional, ConditionalPage, IfMatch } from '../common/conditional/conditional.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { pageRequest } from '../common/pagination/cursor';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { ApiNextPageLink, Paginated } from '../common/pagination/paginated';
import { ParseIdPipe } from '../common/validation/parse-id.pipe';
import { CategoryDto, CategoryUpdateDto, NewCategoryDto } from '../resources/category.dto';
import { ReadsFromReplica } from '../database/replica-reads';

@ApiTags('categories')
@Auth()
@Controller('categories')
export class CategoriesController {
  constructor(
    private readonly createCategory: CreateCategory,
    private readonly updateCategory: UpdateCategory,
    private readonly deleteCategory: DeleteCategory,
    private readonly queries: CategoryQueries,
  ) {}

  @Post()
  @Auth('admin')
  @ApiOperation({ operationId: 'createCategory', summary: 'Create a category' })
  @ApiCreatedResponse({
    type: CategoryDto,
    headers: { Location: { description: "The new category's URL.", schema: { type: 'string' } } },
  })
  @ApiErrors({ 409: 'A category with that name exists, in any letter case or Unicode form (`category_name_taken`).' })
  async create(@Body() body: NewCategoryDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<CategoryDto> {
    const category = await this.createCategory.execute(body);
    void reply.header('Location', `/categories/${category.id}`);
    return CategoryDto.from(category);
  }

  @ReadsFromReplica()
  @Get()
  @ApiOperation({ operationId: 'listCategories', summary: 'List categories' })
  @ApiOkResponse({ type: [CategoryDto], headers: ApiNextPageLink })
  @ConditionalPage()
  @CachedRead('categories')
  async list(@Query() query: PageQueryDto): Promise<Paginated<CategoryDto>> {
    const request = pageRequest(query);
    return Paginated.of(await this.queries.list(request), request, CategoryDto.from);
  }

  @ReadsFromReplica()
  @Get(':categoryId')
  @ApiOperation({ operationId: 'getCategory', summary: 'Get a category' })
  @ApiOkResponse({ type: CategoryDto })
  @Conditional('category')
  @CachedRead('categories')
  async get(@Param('categoryId', ParseIdPipe) id: number): Promise<CategoryDto> {
    return CategoryDto.from(await this.queries.get(id));
  }

  @Patch(':categoryId')
  @Auth('admin')
  @ApiOperation({ operationId: 'updateCategory', summary: 'Update a category' })
  @ApiOkResponse({ type: CategoryDto })
  @ApiErrors({ 409: 'A category with that name exists, in any letter case or Unicode form (`category_name_taken`).' })
  @Conditional('category')
  async update(
    @Param('categoryId', ParseIdPipe) id: number,
    @Body() body: CategoryUpdateDto,
    @IfMatch(CategoryDto.from) precondition?: Precondition<Category>,
  ): Promise<CategoryDto> {
    return CategoryDto.from(await this.updateCategory.execute({ id, ...body, precondition }));
  }

  @Delete(':categoryId')
  @Auth('admin')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteCategory', summary: 'Delete a category that has no pets' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 409: 'Pets still belong to the category (`category_in_use`).' })
  @Conditional('category')
  async remove(
    @Param('categoryId', ParseIdPipe) id: number,
    @IfMatch(CategoryDto.from) precondition?: Precondition<Category>,
  ): Promise<void> {
    await this.deleteCategory.execute(id, precondition);
  }
}

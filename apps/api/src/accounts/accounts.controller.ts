import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { IssueApiKey, ManageApiKeys, SignUp, type VerifiedKey } from '@petstore/application';
import { type Account, LIMITS } from '@petstore/domain';
import type { FastifyReply } from 'fastify';
import { ConditionalPage } from '../common/conditional/conditional.decorator';
import { Auth, CurrentAccount, CurrentApiKey, Public } from '../common/auth/auth.decorators';
import { ShowsSecret } from '../idempotency/idempotency.decorators';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { pageRequest } from '../common/pagination/cursor';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { ApiNextPageLink, Paginated } from '../common/pagination/paginated';
import { ParseIdPipe } from '../common/validation/parse-id.pipe';
import { AccountDto, ApiKeyCreatedDto, ApiKeyDto, NewAccountDto, NewApiKeyDto, SignUpResultDto } from './account.dto';

@ApiTags('accounts')
@Public()
@Controller('accounts')
export class SignUpController {
  constructor(private readonly signUp: SignUp) {}

  @Post()
  @ShowsSecret()
  @ApiOperation({
    operationId: 'signUp',
    summary: 'Create a customer account and its first API key',
    description: "The key's secret is shown only in this response.",
  })
  @ApiCreatedResponse({
    type: SignUpResultDto,
    headers: { Location: { description: '`/accounts/me`', schema: { type: 'string' } } },
  })
  async create(@Body() body: NewAccountDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<SignUpResultDto> {
    const { account, apiKey, secret } = await this.signUp.execute(body.name);
    void reply.header('Location', '/accounts/me');
    return { account: AccountDto.from(account), apiKey: ApiKeyCreatedDto.withSecret(apiKey, secret) };
  }
}

@ApiTags('accounts')
@Auth()
@Controller('accounts/me')
export class MyAccountController {
  constructor(
    private readonly issueKey: IssueApiKey,
    private readonly keys: ManageApiKeys,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'getMyAccount', summary: 'The account of the calling key' })
  @ApiOkResponse({ type: AccountDto })
  me(@CurrentAccount() account: Account): AccountDto {
    return AccountDto.from(account);
  }

  @Post('api-keys')
  @ShowsSecret()
  @ApiOperation({
    operationId: 'createApiKey',
    summary: 'Another API key for the same account',
    description:
      'The secret is shown only in this response. The body is optional: a name, scopes (`read` or `full`, ' +
      'default `full`) and an expiry. A key creates keys only with scopes it has itself; a `read` key cannot ' +
      'create keys at all (`403 insufficient_scope`: creating is a write).',
  })
  @ApiBody({ type: NewApiKeyDto, required: false })
  @ApiCreatedResponse({
    type: ApiKeyCreatedDto,
    headers: { Location: { description: 'The key listing.', schema: { type: 'string' } } },
  })
  @ApiErrors({
    409: `The account already holds ${LIMITS.activeApiKeys.max} active keys (\`too_many_keys\`).`,
    403: 'A key cannot give a new key a scope it does not have itself (`insufficient_scope`).',
  })
  async createKey(
    @CurrentAccount() account: Account,
    @CurrentApiKey() caller: VerifiedKey,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body?: NewApiKeyDto,
  ): Promise<ApiKeyCreatedDto> {
    const request = body?.toRequest() ?? {};
    const { apiKey, secret } = await this.issueKey.execute(account.id, request, caller);
    void reply.header('Location', '/accounts/me/api-keys');
    return ApiKeyCreatedDto.withSecret(apiKey, secret);
  }

  @Get('api-keys')
  @ApiOperation({
    operationId: 'listApiKeys',
    summary: "The account's keys that are not revoked, without secrets, by id",
    description: 'Expired keys are listed too (their `expiresAt` has passed) until they are revoked.',
  })
  @ApiOkResponse({ type: [ApiKeyDto], headers: ApiNextPageLink })
  @ConditionalPage()
  async listKeys(@CurrentAccount() account: Account, @Query() query: PageQueryDto): Promise<Paginated<ApiKeyDto>> {
    const request = pageRequest(query);
    return Paginated.of(await this.keys.list(account.id, request), request, ApiKeyDto.from);
  }

  @Delete('api-keys/:keyId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeApiKey', summary: 'Revoke a key; it is refused at once' })
  @ApiNoContentResponse({ description: 'Revoked.' })
  async revokeKey(@CurrentAccount() account: Account, @Param('keyId', ParseIdPipe) keyId: number): Promise<void> {
    await this.keys.revoke(account.id, keyId);
  }
}

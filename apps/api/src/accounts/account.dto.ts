import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Account, API_KEY_SCOPES, ApiKey, type ApiKeyRequest, type ApiKeyScope, LIMITS, ROLES } from '@petstore/domain';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsString, Length } from 'class-validator';
import { IsDateTime } from '../common/validation/date-time';
import { IsOmittable } from '../common/validation/optional';
import { OptionalBody } from '../common/validation/validation.pipe';

const SCOPES_PROPERTY = {
  type: 'string',
  isArray: true,
  enum: API_KEY_SCOPES,
  enumName: 'ApiKeyScope',
  enumSchema: {
    description:
      'What a key may do. `read`: only `GET` (and `HEAD`); any other method is `403 insufficient_scope`, an ' +
      "administrator's key included. `full`: everything its account may do.",
  },
} as const;

@ApiSchema({ name: 'NewAccount', description: 'Sign-up: the new account is a customer.' })
export class NewAccountDto {
  @ApiProperty({ minLength: LIMITS.accountName.min, maxLength: LIMITS.accountName.max, example: 'Ada Lovelace' })
  @IsString()
  @Length(LIMITS.accountName.min, LIMITS.accountName.max)
  name: string;
}

@ApiSchema({ name: 'Account' })
export class AccountDto {
  @ApiProperty({ type: 'integer', format: 'int64', example: 7 })
  id: number;

  @ApiProperty({ example: 'Ada Lovelace' })
  name: string;

  @ApiProperty({ enum: ROLES, example: 'customer' })
  role: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  createdAt: string;

  static from(account: Account): AccountDto {
    return Object.assign(new AccountDto(), {
      id: account.id,
      name: account.name,
      role: account.role,
      createdAt: account.createdAt.toISOString(),
    });
  }
}

@OptionalBody()
@ApiSchema({
  name: 'NewApiKey',
  description:
    'A new key: each field may be left out, and so may the whole body (no name, `full`, no expiry). ' +
    'A key creates keys only with scopes it has itself.',
})
export class NewApiKeyDto {
  @ApiPropertyOptional({
    description: "A label for the key (where it is used: 'CI', 'dashboard'); surrounding spaces are trimmed.",
    minLength: LIMITS.apiKeyName.min,
    maxLength: LIMITS.apiKeyName.max,
    example: 'CI',
  })
  @IsOmittable()
  @IsString()
  @Length(LIMITS.apiKeyName.min, LIMITS.apiKeyName.max)
  name?: string;

  @ApiPropertyOptional({ ...SCOPES_PROPERTY, minItems: 1, maxItems: API_KEY_SCOPES.length, default: ['full'] })
  @IsOmittable()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(API_KEY_SCOPES.length)
  @IsIn(API_KEY_SCOPES, { each: true })
  scopes?: ApiKeyScope[];

  @ApiPropertyOptional({
    description:
      `When the key stops working (\`401 api_key_expired\` from then on): in the future, at most ` +
      `${LIMITS.apiKeyLifetimeMs.max / 86_400_000} days ahead, and not after the calling key's own expiry. ` +
      "Left out: the calling key's expiry, if it has one; otherwise the key does not expire.",
    format: 'date-time',
    type: 'string',
    example: '2027-01-31T00:00:00Z',
  })
  @IsOmittable()
  @IsDateTime()
  expiresAt?: string;

  toRequest(): ApiKeyRequest {
    return {
      name: this.name,
      scopes: this.scopes,
      expiresAt: this.expiresAt === undefined ? undefined : new Date(this.expiresAt),
    };
  }
}

@ApiSchema({ name: 'ApiKey', description: 'An API key as listed: never with its secret.' })
export class ApiKeyDto {
  @ApiProperty({ type: 'integer', format: 'int64', example: 3 })
  id: number;

  @ApiProperty({ description: 'The start of the key, to tell keys apart.', example: 'psk_Zq3xW9aB' })
  prefix: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'Its label; null if none was given.', example: 'CI' })
  name: string | null;

  @ApiProperty({ ...SCOPES_PROPERTY, minItems: 1, example: ['full'] })
  scopes: ApiKeyScope[];

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: 'string',
    description: 'From then on the key is refused (`api_key_expired`); null: it does not expire.',
  })
  expiresAt: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: 'string',
    description: 'Last use (to the minute); null if never used.',
  })
  lastUsedAt: string | null;

  static from(apiKey: ApiKey): ApiKeyDto {
    return Object.assign(new ApiKeyDto(), ApiKeyDto.fields(apiKey));
  }

  protected static fields(apiKey: ApiKey): ApiKeyDto {
    return {
      id: apiKey.id,
      prefix: apiKey.prefix,
      name: apiKey.name,
      scopes: [...apiKey.scopes],
      expiresAt: apiKey.expiresAt?.toISOString() ?? null,
      createdAt: apiKey.createdAt.toISOString(),
      lastUsedAt: apiKey.lastUsedAt?.toISOString() ?? null,
    };
  }
}

@ApiSchema({ name: 'ApiKeyCreated', description: 'A new API key, with its secret: the only response that shows it.' })
export class ApiKeyCreatedDto extends ApiKeyDto {
  @ApiProperty({ description: 'The secret: shown once, store it now.', example: 'psk_Zq3xW9aB…' })
  key: string;

  static withSecret(apiKey: ApiKey, secret: string): ApiKeyCreatedDto {
    return Object.assign(new ApiKeyCreatedDto(), ApiKeyDto.fields(apiKey), { key: secret });
  }
}

@ApiSchema({ name: 'SignUpResult', description: 'The new account and its first API key (with the secret).' })
export class SignUpResultDto {
  @ApiProperty({ type: AccountDto })
  account: AccountDto;

  @ApiProperty({ type: ApiKeyCreatedDto })
  apiKey: ApiKeyCreatedDto;
}

import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Account, ApiKey, LIMITS, ROLES } from '@petstore/domain';
import { IsString, Length } from 'class-validator';

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

@ApiSchema({ name: 'ApiKey', description: 'An API key as listed: never with its secret.' })
export class ApiKeyDto {
  @ApiProperty({ type: 'integer', format: 'int64', example: 3 })
  id: number;

  @ApiProperty({ description: 'The start of the key, to tell keys apart.', example: 'psk_Zq3xW9aB' })
  prefix: string;

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

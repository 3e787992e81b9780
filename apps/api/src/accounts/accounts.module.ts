import { DynamicModule, Module } from '@nestjs/common';
import {
  AccountRepository,
  ApiKeyRepository,
  ApiKeySecrets,
  Authenticate,
  EnsureAdministrator,
  IssueApiKey,
  ManageApiKeys,
  SignUp,
} from '@petstore/application';
import { CryptoApiKeySecrets, TypeOrmAccountRepository, TypeOrmApiKeyRepository } from '@petstore/infrastructure';
import { BearerStrategy } from '../common/auth/bearer.strategy';
import { MyAccountController, SignUpController } from './accounts.controller';
import { keyRevocationProviders } from './key-revocations.providers';

/** Accounts and keys; verified keys are cached, and revocations announced to every instance (databaseUrl's). */
@Module({})
export class AccountsModule {
  static register(databaseUrl: string): DynamicModule {
    return {
      module: AccountsModule,
      controllers: [SignUpController, MyAccountController],
      providers: [
        { provide: AccountRepository, useClass: TypeOrmAccountRepository },
        { provide: ApiKeyRepository, useClass: TypeOrmApiKeyRepository },
        { provide: ApiKeySecrets, useClass: CryptoApiKeySecrets },
        ...keyRevocationProviders(databaseUrl, true),
        SignUp,
        IssueApiKey,
        ManageApiKeys,
        Authenticate,
        EnsureAdministrator,
        BearerStrategy,
      ],
      exports: [EnsureAdministrator, BearerStrategy],
    };
  }
}

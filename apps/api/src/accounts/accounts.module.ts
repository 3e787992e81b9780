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

/** Accounts and keys; the key cache and the revocation signal come from the global ChangeSignalsModule. */
@Module({})
export class AccountsModule {
  static register(): DynamicModule {
    return {
      module: AccountsModule,
      controllers: [SignUpController, MyAccountController],
      providers: [
        { provide: AccountRepository, useClass: TypeOrmAccountRepository },
        { provide: ApiKeyRepository, useClass: TypeOrmApiKeyRepository },
        { provide: ApiKeySecrets, useClass: CryptoApiKeySecrets },
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

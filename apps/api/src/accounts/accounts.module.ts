import { Module } from '@nestjs/common';
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
import { CryptoApiKeySecrets, PgAccountRepository, PgApiKeyRepository } from '@petstore/infrastructure';
import { BearerStrategy } from '../common/auth/bearer.strategy';
import { ChangeSignalsModule } from '../change-signals/change-signals.module';
import { MyAccountController, SignUpController } from './accounts.controller';
import { IdempotencyModule } from '../idempotency/idempotency.module';

/**
 * The accounts' repository, bound once: the slices that check something counted per account under its row's lock
 * (ordering's hold limit, the webhook endpoints of an owner) import this, not the accounts' use cases.
 */
@Module({
  providers: [{ provide: AccountRepository, useClass: PgAccountRepository }],
  exports: [AccountRepository],
})
export class AccountRepositoryModule {}

/**
 * Accounts, their API keys and authentication (the bearer strategy the guard uses). The key cache and the
 * revocation signal are ChangeSignalsModule's (one per process, however many import it). Its controllers are
 * AccountsHttpModule, which the assembly adds for the `http` role; the seed uses EnsureAdministrator.
 */
@Module({
  imports: [ChangeSignalsModule, AccountRepositoryModule],
  providers: [
    { provide: ApiKeyRepository, useClass: PgApiKeyRepository },
    { provide: ApiKeySecrets, useClass: CryptoApiKeySecrets },
    SignUp,
    IssueApiKey,
    ManageApiKeys,
    Authenticate,
    EnsureAdministrator,
    BearerStrategy,
  ],
  exports: [SignUp, IssueApiKey, ManageApiKeys, EnsureAdministrator, BearerStrategy, ApiKeySecrets],
})
export class AccountsModule {}

/** `/accounts` (the `http` role). */
@Module({ imports: [AccountsModule, IdempotencyModule], controllers: [SignUpController, MyAccountController] })
export class AccountsHttpModule {}

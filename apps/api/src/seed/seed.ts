import { DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  AccountRepository,
  ApiKeyRepository,
  ApiKeySecrets,
  CategoryQueries,
  CategoryRepository,
  CreateCategory,
  CreatePet,
  EnsureAdministrator,
  PetQueries,
  SetStock,
} from '@petstore/application';
import {
  CryptoApiKeySecrets,
  TypeOrmAccountRepository,
  TypeOrmApiKeyRepository,
  TypeOrmCategoryRepository,
} from '@petstore/infrastructure';
import { nestLogger, RootLogger } from '../common/logging/logging';
import { AppConfig } from '../config/app-config';
import { keyRevocationProviders } from '../accounts/key-revocations.providers';
import { CatalogueRepositoriesModule } from '../database/catalogue-repositories.module';
import { DatabaseModule } from '../database/database.module';
import { SeedDemoCatalogue, SeedOutcome } from './demo-catalogue';

/** The composition root of `main.js --seed`: the database and the use cases the seed calls, no HTTP, no queue. */
@Module({})
class SeedModule {
  static register(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: SeedModule,
      global: true, // AppConfig for the catalogue's settings (OrderHoldSettings), as in the app and the worker
      imports: [DatabaseModule.forRoot(databaseUrl, config), CatalogueRepositoriesModule],
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: CategoryRepository, useClass: TypeOrmCategoryRepository },
        { provide: AccountRepository, useClass: TypeOrmAccountRepository },
        { provide: ApiKeyRepository, useClass: TypeOrmApiKeyRepository },
        { provide: ApiKeySecrets, useClass: CryptoApiKeySecrets },
        // A rotated administrator key is announced to running instances; the seed itself caches nothing.
        ...keyRevocationProviders(databaseUrl, false),
        CategoryQueries,
        PetQueries,
        CreateCategory,
        CreatePet,
        SetStock,
        EnsureAdministrator,
        SeedDemoCatalogue,
      ],
      exports: [AppConfig],
    };
  }
}

/** Runs the seed on an open (migrated) database and says what it did, on stdout, for a person. */
export async function seedDemoData(options: {
  config: AppConfig;
  databaseUrl: string;
  logger: RootLogger;
}): Promise<SeedOutcome> {
  const context = await NestFactory.createApplicationContext(SeedModule.register(options.config, options.databaseUrl), {
    logger: nestLogger(options.logger),
    abortOnError: false,
  });
  try {
    const outcome = await context.get(SeedDemoCatalogue).execute();
    process.stdout.write(describe(outcome, options.config.http.port));
    return outcome;
  } finally {
    await context.close();
  }
}

function describe(outcome: SeedOutcome, port: number): string {
  if (!outcome.seeded) return 'The database already holds categories or pets: the seed changed nothing.\n';
  const { available, pending, sold } = outcome.pets;
  return [
    `Seeded the demo catalogue: ${outcome.categories} categories, ${available + pending + sold} pets ` +
      `(${available} available, ${pending} pending, ${sold} sold), ${outcome.units} units in stock.`,
    'An administrator was created. Its API key, shown only this once (keep it; it is stored only as a hash):',
    '',
    `  ${outcome.administratorKey}`,
    '',
    'Try it once the service runs:',
    `  curl -s localhost:${port}/pets -H 'Authorization: Bearer ${outcome.administratorKey}'`,
    '',
  ].join('\n');
}

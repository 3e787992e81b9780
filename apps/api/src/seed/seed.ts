import { INestApplicationContext, Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { SeedDemoCatalogue, SeedOutcome } from './demo-catalogue';

/** The demo catalogue (the `seed` role): the catalogue's and accounts' use cases, no HTTP. */
@Module({ imports: [CatalogueModule, AccountsModule], providers: [SeedDemoCatalogue] })
export class SeedModule {}

/** Runs the seed in a process composed for it and says what it did, on stdout, for a person. */
export async function seedDemoData(context: INestApplicationContext, port: number): Promise<SeedOutcome> {
  const outcome = await context.get(SeedDemoCatalogue).execute();
  process.stdout.write(describe(outcome, port));
  return outcome;
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

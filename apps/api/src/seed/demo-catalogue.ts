import { Injectable } from '@nestjs/common';
import {
  ApiKeySecrets,
  CategoryQueries,
  CreateCategory,
  CreatePet,
  EnsureAdministrator,
  PetQueries,
  SetStock,
  UnitOfWork,
} from '@petstore/application';
import { CategoryNameTakenError, Stock, PetStatus } from '@petstore/domain';

interface DemoPet {
  name: string;
  status: PetStatus;
  /** Units in stock, set after creation (an available pet starts with 1). */
  stock?: number;
}

/** The small catalogue `npm run seed` writes: every status, single animals and batches. */
export const DEMO_CATALOGUE: Array<{ category: string; description: string; pets: DemoPet[] }> = [
  {
    category: 'Dogs',
    description: 'Puppies and grown dogs.',
    pets: [
      { name: 'Rex', status: 'available' },
      { name: 'Labrador puppies', status: 'available', stock: 5 },
      { name: 'Max', status: 'pending' },
      { name: 'Old Bob', status: 'sold' },
    ],
  },
  {
    category: 'Cats',
    description: 'Kittens and cats.',
    pets: [
      { name: 'Luna', status: 'available' },
      { name: 'Tabby kittens', status: 'available', stock: 4 },
      { name: 'Milo', status: 'pending' },
      { name: 'Cleo', status: 'sold' },
    ],
  },
  {
    category: 'Fish',
    description: 'Freshwater fish, sold by the fish.',
    pets: [
      { name: 'Goldfish', status: 'available', stock: 20 },
      { name: 'Neon tetras', status: 'available', stock: 50 },
      { name: 'Betta', status: 'sold' },
    ],
  },
  {
    category: 'Birds',
    description: 'Budgies and parrots.',
    pets: [
      { name: 'Budgies', status: 'available', stock: 2 },
      { name: 'Polly', status: 'pending' },
    ],
  },
];

export type SeedOutcome =
  | { seeded: true; categories: number; pets: Record<PetStatus, number>; units: number; administratorKey: string }
  | { seeded: false };

/**
 * Fills an empty database with DEMO_CATALOGUE and an administrator, through the use cases (so every
 * domain rule applies), in one transaction: either all of it is written or none. A database that
 * already holds a category or a pet is left as it is, so running it again changes nothing. Two seeds
 * at once: the second one's first category collides with the first's (unique name) and rolls back.
 */
@Injectable()
export class SeedDemoCatalogue {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly categoryQueries: CategoryQueries,
    private readonly petQueries: PetQueries,
    private readonly createCategory: CreateCategory,
    private readonly createPet: CreatePet,
    private readonly setStock: SetStock,
    private readonly ensureAdministrator: EnsureAdministrator,
    private readonly secrets: ApiKeySecrets,
  ) {}

  async execute(): Promise<SeedOutcome> {
    try {
      return await this.uow.run(() => this.seed());
    } catch (error) {
      if (error instanceof CategoryNameTakenError) return { seeded: false };
      throw error;
    }
  }

  private async seed(): Promise<SeedOutcome> {
    const [categories, pets] = await Promise.all([
      this.categoryQueries.list({ limit: 1 }),
      this.petQueries.list({}, { limit: 1 }),
    ]);
    if (categories.items.length || pets.items.length) return { seeded: false };

    const counts: Record<PetStatus, number> = { available: 0, pending: 0, sold: 0 };
    let units = 0;
    for (const entry of DEMO_CATALOGUE) {
      const category = await this.createCategory.execute({ name: entry.category, description: entry.description });
      for (const demo of entry.pets) {
        const pet = await this.createPet.execute({ name: demo.name, categoryId: category.id, status: demo.status });
        const level =
          demo.stock === undefined ? null : await this.setStock.execute({ petId: pet.id, quantity: demo.stock });
        counts[level?.status ?? pet.status] += 1;
        units += level?.quantity ?? Stock.initialQuantityFor(pet.status);
      }
    }
    // A key of our own making, held by a new administrator: not an ADMIN_API_KEY, so starting with one later (as the
    // README suggests) does not revoke it, and it revokes none.
    const { key } = this.secrets.generate();
    await this.ensureAdministrator.execute(key, { bootstrap: false });
    return { seeded: true, categories: DEMO_CATALOGUE.length, pets: counts, units, administratorKey: key };
  }
}

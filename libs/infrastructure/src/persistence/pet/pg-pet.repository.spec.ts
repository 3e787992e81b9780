import { aCategory, aPet, describePetRepositoryContract } from '@petstore/application/testing';
import { Stock, Pet, PetStatus, UnknownCategoryError } from '@petstore/domain';
import { resetDatabase } from '@petstore/testing';
import { PgRepositories, pgRepositories, useTestDatabase } from '../../../test/support/real-database';
import { PgStockRepository } from '../stock/pg-stock.repository';
import { PgPetRepository } from './pg-pet.repository';

/** Polls `check` every 20 ms for up to 5 s. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 5000; !(await check()); ) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('PgPetRepository and PgStockRepository (real database)', () => {
  const db = useTestDatabase({ reset: true });
  let repositories: PgRepositories;
  let pets: PgPetRepository;
  let stocks: PgStockRepository;
  let categoryId: number;

  beforeAll(async () => {
    repositories = pgRepositories(db.host);
    ({ pets, stocks } = repositories);
    categoryId = (await aCategory().named('Dogs').saveIn(repositories)).id;
  });

  /** The pet's stock entry as the database holds it (read outside the repository, which only locks it). */
  const entryOf = async (petId: number): Promise<Stock | null> => {
    const sql = 'SELECT quantity, version FROM stock WHERE pet_id = $1';
    const rows: Array<{ quantity: number; version: string }> = await db.dataSource.query(sql, [petId]);
    return rows.length ? Stock.restore({ petId, quantity: rows[0].quantity, version: Number(rows[0].version) }) : null;
  };

  /** A pet of the category with a new pet's stock entry. */
  const newPet = async (name: string, status: PetStatus = 'available'): Promise<Pet> =>
    (await aPet().named(name).inCategory(categoryId).withStatus(status).saveIn(repositories)).pet;

  it('saves a new pet (an id from the sequence), reads it back and updates it', async () => {
    const pet = await newPet('Rex');
    expect(pet.id).toBeGreaterThan(0);
    expect((await pets.findById(pet.id))?.toSnapshot()).toEqual({
      version: 1,
      id: pet.id,
      name: 'Rex',
      categoryId,
      status: 'available',
      createdAt: pet.createdAt,
    });
    pet.rename('Max');
    pet.hold();
    await pets.save(pet);
    expect((await pets.findById(pet.id))?.toSnapshot()).toEqual({
      id: pet.id,
      name: 'Max',
      categoryId,
      status: 'pending',
      createdAt: pet.createdAt,
      version: 2,
    });
    expect(await pets.findById(987654)).toBeNull();
  });

  it('turns a missing category into UnknownCategoryError, on insert and on update', async () => {
    await expect(
      pets.add(Pet.create({ id: await pets.nextId(), name: 'Ghost', categoryId: 987654, now: new Date() })),
    ).rejects.toBeInstanceOf(UnknownCategoryError);
    const pet = await newPet('Mover');
    pet.moveToCategory(987654);
    await expect(pets.save(pet)).rejects.toMatchObject({ kind: 'unknown_category' });
  });

  it('keeps the stock entry: create, find, save', async () => {
    const pet = await newPet('Stocked', 'pending');
    expect((await entryOf(pet.id))?.toSnapshot()).toEqual({ petId: pet.id, quantity: 0, version: 1 });
    const item = (await entryOf(pet.id))!;
    item.restock(42);
    await stocks.save(item);
    expect((await entryOf(pet.id))?.quantity).toBe(42);
    expect(await entryOf(987654)).toBeNull();
    await expect(stocks.save(Stock.restore({ petId: 987654, quantity: 1, version: 1 }))).rejects.toThrow(
      /no stock entry/,
    );
  });

  it('deletes a pet with its stock entry', async () => {
    const pet = await newPet('Bye');
    expect(await pets.delete(pet.id)).toBe(true);
    expect(await pets.findById(pet.id)).toBeNull();
    expect(await entryOf(pet.id)).toBeNull();
    expect(await pets.delete(pet.id)).toBe(false);
  });

  it('lets the database refuse a negative stock, a second entry for a pet, and an entry without a pet', async () => {
    const pet = await newPet('Checked');
    await expect(db.dataSource.query('UPDATE stock SET quantity = -1 WHERE pet_id = $1', [pet.id])).rejects.toThrow(
      /check/i,
    );
    await expect(stocks.create(Stock.forNewPet(pet))).rejects.toThrow(/duplicate key/);
    await expect(db.dataSource.query('INSERT INTO stock (pet_id, quantity) VALUES (987654, 1)')).rejects.toThrow(
      /foreign key/,
    );
    await expect(db.dataSource.query(`UPDATE pets SET status = 'lost' WHERE id = $1`, [pet.id])).rejects.toThrow(
      /check/i,
    );
  });

  describe('row locks (SELECT … FOR UPDATE)', () => {
    it.each([
      ['lockById', (id: number) => pets.lockById(id)],
      ['lockWithPet', (id: number) => stocks.lockWithPet(id)],
    ])('%s refuses to run outside a transaction', async (_, lock) => {
      const pet = await newPet('Loose');
      await expect(lock(pet.id)).rejects.toThrow(/transaction/i);
    });

    it.each([
      ['lockById', 'pets', 'id', (id: number) => pets.lockById(id)],
      ['lockWithPet (the pet)', 'pets', 'id', (id: number) => stocks.lockWithPet(id)],
      ['lockWithPet (the entry)', 'stock', 'pet_id', (id: number) => stocks.lockWithPet(id)],
    ])('%s holds the row until the transaction ends', async (_, table, column, lock) => {
      const pet = await newPet('Locked');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = db.host.transaction(async () => {
        expect(await lock(pet.id)).not.toBeNull();
        locked();
        await held;
      });
      await isLocked;
      // Another connection cannot take the same row while the holder's transaction runs.
      const runner = db.dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.startTransaction();
        await runner.query(`SET LOCAL lock_timeout = '200ms'`);
        await expect(runner.query(`SELECT 1 FROM ${table} WHERE ${column} = $1 FOR UPDATE`, [pet.id])).rejects.toThrow(
          /lock timeout/i,
        );
        await runner.rollbackTransaction();
        release();
        await holder;
        await runner.startTransaction();
        await expect(
          runner.query(`SELECT 1 FROM ${table} WHERE ${column} = $1 FOR UPDATE NOWAIT`, [pet.id]),
        ).resolves.toHaveLength(1);
        await runner.rollbackTransaction();
      } finally {
        release();
        await runner.release();
      }
    });

    it('finds nothing to lock for a pet that does not exist', async () => {
      await db.host.transaction(async () => {
        expect(await pets.lockById(987654)).toBeNull();
        expect(await stocks.lockWithPet(987654)).toBeNull();
      });
    });

    it('lockWithPet takes the pet before the entry: waiting for the entry, it already holds the pet', async () => {
      const pet = await newPet('Ordered');
      const blocker = db.dataSource.createQueryRunner();
      const probe = db.dataSource.createQueryRunner();
      await Promise.all([blocker.connect(), probe.connect()]);
      try {
        await blocker.startTransaction();
        await blocker.query(`SELECT 1 FROM stock WHERE pet_id = $1 FOR UPDATE`, [pet.id]);
        const waiting = db.host.transaction(() => stocks.lockWithPet(pet.id));
        await eventually(async () => {
          const rows = await probe.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE OF p, s%'`,
          );
          return rows[0].n > 0;
        });
        await probe.startTransaction();
        await expect(probe.query(`SELECT 1 FROM pets WHERE id = $1 FOR UPDATE NOWAIT`, [pet.id])).rejects.toThrow(
          /could not obtain lock/i,
        );
        await probe.rollbackTransaction();
        await blocker.commitTransaction();
        expect((await waiting)?.pet.id).toBe(pet.id);
      } finally {
        await Promise.all([blocker.release(), probe.release()]);
      }
    });
  });
});

describe('TypeORM pet, stock and stock-level adapters (real database)', () => {
  const db = useTestDatabase();

  describePetRepositoryContract('PostgreSQL', async () => {
    await resetDatabase(db.dataSource);
    return pgRepositories(db.host);
  });
});

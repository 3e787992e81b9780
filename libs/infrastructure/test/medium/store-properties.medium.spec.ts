import { CancelOrder, CompleteOrder, OrderHoldSettings, PlaceOrder, SetStock, UpdatePet } from '@petstore/application';
import { aCategory, anAccount, aPet } from '@petstore/application/testing';
import { Account, DomainError, PetStatus } from '@petstore/domain';
import { StoreRows } from '@petstore/testing';
import fc from 'fast-check';
import { useTestDatabase } from '../support/real-database';
import { pgPetstore, PgPetstore } from '../support/pg-petstore';

/**
 * Random sequences of place / cancel / complete / restock / status-by-hand, run through the use cases on the
 * PostgreSQL repositories (the medium tier: no HTTP). Before each step the expected outcome is derived from the rows
 * as they stand (docs/domain.md, Commands and their effects); after each step invariants I1–I5 are checked with SQL.
 * Moved from apps/api/test/store-properties.e2e.spec.ts: an outcome here is the use case's result or its refusal's
 * kind; the status each kind is answered with over HTTP is held by store-orders.e2e and the API's error table.
 */

const STOCK_MAX = 2_147_483_647;
const STATUSES: PetStatus[] = ['available', 'pending', 'sold'];

type Command =
  | { kind: 'place'; pet: number; quantity: number; customer: number }
  | { kind: 'cancel'; order: number; by: number }
  | { kind: 'complete'; order: number }
  | { kind: 'restock'; pet: number; quantity: number }
  | { kind: 'hand'; pet: number; to: PetStatus };

/** What a step did: `ok`, or the kind of the domain error that refused it. */
type Outcome = 'ok' | string;

const PETS = 2;
const CUSTOMERS = 2;

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('place' as const),
      pet: fc.nat(PETS - 1),
      quantity: fc.integer({ min: 1, max: 3 }),
      customer: fc.nat(CUSTOMERS - 1),
    }),
  },
  // `by`: a customer (maybe not the owner) or, as CUSTOMERS, the administrator.
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('cancel' as const), order: fc.nat(40), by: fc.nat(CUSTOMERS) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('complete' as const), order: fc.nat(40) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('restock' as const),
      pet: fc.nat(PETS - 1),
      quantity: fc.integer({ min: 0, max: 5 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('hand' as const),
      pet: fc.nat(PETS - 1),
      to: fc.constantFrom(...STATUSES),
    }),
  },
);

/**
 * Stock 2 and 0: two orders placed, one refused (no stock), the first cancelled by its owner, the second completed,
 * the empty pet restocked. Checked like the random ones (the model derives every outcome), so it asserts nothing
 * by itself; it makes the outcome coverage at the end hold on every run.
 */
const COVERING_EXAMPLE: [number[], Command[]] = [
  [2, 0],
  [
    { kind: 'place', pet: 0, quantity: 1, customer: 0 },
    { kind: 'place', pet: 0, quantity: 1, customer: 1 },
    { kind: 'place', pet: 1, quantity: 1, customer: 0 },
    { kind: 'cancel', order: 0, by: 0 },
    { kind: 'complete', order: 1 },
    { kind: 'restock', pet: 1, quantity: 2 },
  ],
];

interface ModelOrder {
  id: number;
  petId: number;
  owner: number;
  state: 'open' | 'complete' | 'cancelled';
}

describe('store invariants under random command sequences (fast-check, use cases, real PostgreSQL)', () => {
  const db = useTestDatabase();
  let store: PgPetstore;
  let rows: StoreRows;
  let customers: Account[];
  let admin: Account;
  let categoryId: number;
  let placeOrder: PlaceOrder;
  let cancelOrder: CancelOrder;
  let completeOrder: CompleteOrder;
  let setStock: SetStock;
  let updatePet: UpdatePet;

  beforeAll(async () => {
    store = pgPetstore(db.host);
    const { uow, orderCommand, orders, accounts, clock, stockCommand } = store;
    // No hold limit: the limit is order-holds.medium's (the HTTP tests run without one too).
    placeOrder = new PlaceOrder(uow, orderCommand, orders, accounts, clock, new OrderHoldSettings(0, 60));
    cancelOrder = new CancelOrder(uow, orderCommand, clock);
    completeOrder = new CompleteOrder(uow, orderCommand, clock);
    setStock = new SetStock(stockCommand);
    updatePet = new UpdatePet(stockCommand);
    rows = await StoreRows.on(db.url);
    categoryId = (await aCategory().named(`Store kind ${Date.now()}`).saveIn(store)).id;
    customers = [];
    for (let i = 0; i < CUSTOMERS; i++) customers.push(await anAccount().saveIn(store));
    admin = await anAccount().admin().saveIn(store);
  });
  afterAll(() => rows.close());

  /** A pet created available (a new pet's stock), whose stock is then set to `quantity`, as an administrator does. */
  const newPet = async (quantity: number): Promise<number> => {
    const { pet } = await aPet().inCategory(categoryId).saveIn(store);
    await setStock.execute({ petId: pet.id, quantity });
    return pet.id;
  };
  const openOrders = async (petId: number): Promise<number> => (await rows.ordersOf(petId)).open;

  /** What docs/domain.md says the step must do, given the rows before it. */
  async function expected(cmd: Command, petIds: number[], orders: ModelOrder[]): Promise<Outcome> {
    switch (cmd.kind) {
      case 'place': {
        const { quantity, status } = await rows.stock(petIds[cmd.pet]);
        if (status !== 'available') return 'pet_not_available';
        if (cmd.quantity > quantity) return 'insufficient_stock';
        return 'ok';
      }
      case 'cancel':
      case 'complete': {
        const order = orders[cmd.order % orders.length];
        const isAdmin = cmd.kind === 'complete' || cmd.by === CUSTOMERS;
        if (!isAdmin && cmd.kind === 'cancel' && cmd.by !== order.owner) return 'not_found';
        if (order.state === 'cancelled') return 'order_already_cancelled';
        if (order.state === 'complete') return 'order_already_complete';
        return 'ok';
      }
      case 'restock':
        return 'ok';
      case 'hand': {
        const { quantity, status: from } = await rows.stock(petIds[cmd.pet]);
        const open = await openOrders(petIds[cmd.pet]);
        const refused = 'invalid_status_transition';
        if (from === cmd.to) return 'ok';
        if (cmd.to === 'available') return quantity > 0 ? 'ok' : refused;
        if (cmd.to === 'pending') return from === 'sold' ? refused : 'ok';
        return open === 0 ? 'ok' : refused;
      }
    }
  }

  /** Runs the step; a placed order's id comes back with `ok`. */
  async function run(cmd: Command, petIds: number[], orders: ModelOrder[]): Promise<{ outcome: Outcome; id?: number }> {
    const ran = async (): Promise<number | undefined> => {
      switch (cmd.kind) {
        case 'place':
          return (
            await placeOrder.execute({ petId: petIds[cmd.pet], quantity: cmd.quantity, by: customers[cmd.customer] })
          ).id;
        case 'cancel': {
          const order = orders[cmd.order % orders.length];
          await cancelOrder.execute({ orderId: order.id, by: cmd.by === CUSTOMERS ? admin : customers[cmd.by] });
          return undefined;
        }
        case 'complete':
          await completeOrder.execute({ orderId: orders[cmd.order % orders.length].id });
          return undefined;
        case 'restock':
          await setStock.execute({ petId: petIds[cmd.pet], quantity: cmd.quantity });
          return undefined;
        case 'hand':
          await updatePet.execute({ id: petIds[cmd.pet], status: cmd.to });
          return undefined;
      }
    };
    try {
      return { outcome: 'ok', id: await ran() };
    } catch (error) {
      // A refusal is a domain error; anything else (a 500 over HTTP) fails the test.
      if (error instanceof DomainError) return { outcome: error.kind };
      throw error;
    }
  }

  /** I1–I5 for the pets of this run, read straight from the tables. */
  async function checkInvariants(petIds: number[], stocked: Map<number, number>, orders: ModelOrder[]): Promise<void> {
    for (const petId of petIds) {
      const { quantity, status } = await rows.stock(petId);
      const counts = await rows.ordersOf(petId);
      // I1: never negative (nor above the limit).
      expect(quantity).toBeGreaterThanOrEqual(0);
      expect(quantity).toBeLessThanOrEqual(STOCK_MAX);
      // I3: sold ⇒ nothing in stock and no open order.
      if (status === 'sold') expect({ quantity, open: counts.open }).toEqual({ quantity: 0, open: 0 });
      // I4: every unit ever stocked is in stock, in an open order or in a completed one.
      expect(quantity + counts.openUnits + counts.completedUnits).toBe(stocked.get(petId));
    }
    // I5: completed orders stay completed, cancelled ones cancelled (kept as records), open ones open.
    const { rows: stored } = await rows.db.query('SELECT id::int AS id, status FROM orders WHERE id = ANY($1)', [
      orders.map((o) => o.id),
    ]);
    const inDb = new Map<number, string>(stored.map((r: { id: number; status: string }) => [r.id, r.status]));
    const expectedStatus = { open: 'placed', complete: 'completed', cancelled: 'cancelled' } as const;
    for (const order of orders) {
      expect({ id: order.id, status: inDb.get(order.id) }).toEqual({
        id: order.id,
        status: expectedStatus[order.state],
      });
    }
  }

  it('keeps I1–I5 after every step, and does as the command table says', async () => {
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: PETS, maxLength: PETS }),
        fc.array(command, { minLength: 1, maxLength: 25 }),
        async (initial, commands) => {
          const petIds: number[] = [];
          const stocked = new Map<number, number>();
          for (const quantity of initial) {
            const petId = await newPet(quantity);
            petIds.push(petId);
            stocked.set(petId, quantity);
          }
          const orders: ModelOrder[] = [];
          await checkInvariants(petIds, stocked, orders);

          for (const cmd of commands) {
            if ((cmd.kind === 'cancel' || cmd.kind === 'complete') && orders.length === 0) continue;
            const want = await expected(cmd, petIds, orders);
            const before = 'pet' in cmd ? await rows.stock(petIds[cmd.pet]) : null;
            const { outcome, id } = await run(cmd, petIds, orders);
            expect({ cmd, outcome }).toEqual({ cmd, outcome: want });
            const seen = `${cmd.kind} ${outcome === 'ok' ? 'ok' : 'refused'}`;
            outcomes.set(seen, (outcomes.get(seen) ?? 0) + 1);

            if (cmd.kind === 'place' && outcome === 'ok') {
              orders.push({ id: id as number, petId: petIds[cmd.pet], owner: cmd.customer, state: 'open' });
            } else if (cmd.kind === 'cancel' && outcome === 'ok') {
              orders[cmd.order % orders.length].state = 'cancelled';
            } else if (cmd.kind === 'complete' && outcome === 'ok') {
              orders[cmd.order % orders.length].state = 'complete';
            } else if ((cmd.kind === 'restock' || cmd.kind === 'hand') && outcome === 'ok') {
              // Setting the stock (or selling by hand, which empties it) moves units in or out of the store.
              const petId = petIds[cmd.pet];
              const after = await rows.stock(petId);
              stocked.set(petId, (stocked.get(petId) ?? 0) + after.quantity - (before?.quantity ?? 0));
              if (cmd.kind === 'restock') expect(after.quantity).toBe(cmd.quantity);
            }
            await checkInvariants(petIds, stocked, orders);
          }
        },
      ),
      // The random runs, and first one sequence that meets every outcome checked below: with the 25 random runs
      // alone, a CI run drew no successful cancel at all and failed the coverage check, not the store.
      { numRuns: 25, examples: [COVERING_EXAMPLE] },
    );
    // The sequences did exercise the store: orders were placed, refused, cancelled and completed.
    for (const outcome of ['place ok', 'place refused', 'cancel ok', 'complete ok', 'restock ok']) {
      expect({ outcome, seen: (outcomes.get(outcome) ?? 0) > 0 }).toEqual({ outcome, seen: true });
    }
  }, 120_000);
});

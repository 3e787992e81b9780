import fc from 'fast-check';
import { PetStatus, StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp, TestResponse } from './support/test-app';

/**
 * Random sequences of place / cancel / complete / restock / status-by-hand, sent over HTTP to the
 * real app on a real PostgreSQL. Before each step the expected answer is derived from the rows as
 * they stand (docs/domain.md, Commands and their effects); after each step invariants I1–I5 are checked with SQL.
 */

const STOCK_MAX = 2_147_483_647;
const STATUSES: PetStatus[] = ['available', 'pending', 'sold'];

type Command =
  | { kind: 'place'; pet: number; quantity: number; customer: number }
  | { kind: 'cancel'; order: number; by: number }
  | { kind: 'complete'; order: number }
  | { kind: 'restock'; pet: number; quantity: number }
  | { kind: 'hand'; pet: number; to: PetStatus };

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
 * the empty pet restocked. Checked like the random ones (the model derives every answer), so it asserts nothing
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

describe('store invariants under random command sequences (fast-check, HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let store: StoreFixtures;
  let customers: string[];

  beforeAll(async () => {
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
    customers = await api.customers(CUSTOMERS, 'Shopper');
  });
  afterAll(async () => {
    await store.close();
    await api.close();
  });

  const openOrders = async (petId: number): Promise<number> => (await store.ordersOf(petId)).open;

  /** What docs/domain.md says the step must answer, given the rows before it. */
  async function expected(
    cmd: Command,
    petIds: number[],
    orders: ModelOrder[],
  ): Promise<{ status: number; code?: string }> {
    switch (cmd.kind) {
      case 'place': {
        const { quantity, status } = await store.stock(petIds[cmd.pet]);
        if (status !== 'available') return { status: 409, code: 'pet_not_available' };
        if (cmd.quantity > quantity) return { status: 409, code: 'insufficient_stock' };
        return { status: 201 };
      }
      case 'cancel':
      case 'complete': {
        const order = orders[cmd.order % orders.length];
        const isAdmin = cmd.kind === 'complete' || cmd.by === CUSTOMERS;
        if (!isAdmin && cmd.kind === 'cancel' && cmd.by !== order.owner) return { status: 404, code: 'not_found' };
        if (order.state === 'cancelled') return { status: 409, code: 'order_already_cancelled' };
        if (order.state === 'complete') return { status: 409, code: 'order_already_complete' };
        return { status: cmd.kind === 'cancel' ? 204 : 200 };
      }
      case 'restock':
        return { status: 200 };
      case 'hand': {
        const { quantity, status: from } = await store.stock(petIds[cmd.pet]);
        const open = await openOrders(petIds[cmd.pet]);
        const refused = { status: 409, code: 'invalid_status_transition' };
        if (from === cmd.to) return { status: 200 };
        if (cmd.to === 'available') return quantity > 0 ? { status: 200 } : refused;
        if (cmd.to === 'pending') return from === 'sold' ? refused : { status: 200 };
        return open === 0 ? { status: 200 } : refused;
      }
    }
  }

  async function run(cmd: Command, petIds: number[], orders: ModelOrder[]): Promise<TestResponse> {
    switch (cmd.kind) {
      case 'place':
        return store.order(customers[cmd.customer], { petId: petIds[cmd.pet], quantity: cmd.quantity });
      case 'cancel': {
        const order = orders[cmd.order % orders.length];
        return api.delete(`/store/orders/${order.id}`, { key: cmd.by === CUSTOMERS ? ADMIN_KEY : customers[cmd.by] });
      }
      case 'complete':
        return api.patch(`/store/orders/${orders[cmd.order % orders.length].id}`, {
          key: ADMIN_KEY,
          body: { complete: true },
        });
      case 'restock':
        return api.put(`/store/inventory/${petIds[cmd.pet]}`, { key: ADMIN_KEY, body: { quantity: cmd.quantity } });
      case 'hand':
        return api.patch(`/pets/${petIds[cmd.pet]}`, { key: ADMIN_KEY, body: { status: cmd.to } });
    }
  }

  /** I1–I5 for the pets of this run, read straight from the tables. */
  async function checkInvariants(petIds: number[], stocked: Map<number, number>, orders: ModelOrder[]): Promise<void> {
    for (const petId of petIds) {
      const { quantity, status } = await store.stock(petId);
      const counts = await store.ordersOf(petId);
      // I1: never negative (nor above the limit).
      expect(quantity).toBeGreaterThanOrEqual(0);
      expect(quantity).toBeLessThanOrEqual(STOCK_MAX);
      // I3: sold ⇒ nothing in stock and no open order.
      if (status === 'sold') expect({ quantity, open: counts.open }).toEqual({ quantity: 0, open: 0 });
      // I4: every unit ever stocked is in stock, in an open order or in a completed one.
      expect(quantity + counts.openUnits + counts.completedUnits).toBe(stocked.get(petId));
    }
    // I5: completed orders stay completed, cancelled ones cancelled (kept as records), open ones open.
    const { rows } = await store.db.query('SELECT id::int AS id, status FROM orders WHERE id = ANY($1)', [
      orders.map((o) => o.id),
    ]);
    const inDb = new Map<number, string>(rows.map((r: { id: number; status: string }) => [r.id, r.status]));
    const expected = { open: 'placed', complete: 'completed', cancelled: 'cancelled' } as const;
    for (const order of orders) {
      expect({ id: order.id, status: inDb.get(order.id) }).toEqual({ id: order.id, status: expected[order.state] });
    }
  }

  it('keeps I1–I5 after every step, and answers as the command table says', async () => {
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: PETS, maxLength: PETS }),
        fc.array(command, { minLength: 1, maxLength: 25 }),
        async (initial, commands) => {
          const petIds: number[] = [];
          const stocked = new Map<number, number>();
          for (const quantity of initial) {
            const petId = await store.pet({ quantity });
            petIds.push(petId);
            stocked.set(petId, quantity);
          }
          const orders: ModelOrder[] = [];
          await checkInvariants(petIds, stocked, orders);

          for (const cmd of commands) {
            if ((cmd.kind === 'cancel' || cmd.kind === 'complete') && orders.length === 0) continue;
            const want = await expected(cmd, petIds, orders);
            const before = 'pet' in cmd ? await store.stock(petIds[cmd.pet]) : null;
            const response = await run(cmd, petIds, orders);
            expect({ cmd, status: response.status, code: response.body?.code }).toEqual({
              cmd,
              ...want,
              code: want.code,
            });
            const outcome = `${cmd.kind} ${response.status}`;
            outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);

            if (cmd.kind === 'place' && response.status === 201) {
              orders.push({ id: response.body.id, petId: petIds[cmd.pet], owner: cmd.customer, state: 'open' });
            } else if (cmd.kind === 'cancel' && response.status === 204) {
              orders[cmd.order % orders.length].state = 'cancelled';
            } else if (cmd.kind === 'complete' && response.status === 200) {
              orders[cmd.order % orders.length].state = 'complete';
            } else if ((cmd.kind === 'restock' || cmd.kind === 'hand') && response.status === 200) {
              // Setting the stock (or selling by hand, which empties it) moves units in or out of the store.
              const petId = petIds[cmd.pet];
              const after = await store.stock(petId);
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
    for (const outcome of ['place 201', 'place 409', 'cancel 204', 'complete 200', 'restock 200']) {
      expect({ outcome, seen: (outcomes.get(outcome) ?? 0) > 0 }).toEqual({ outcome, seen: true });
    }
  }, 120_000);
});

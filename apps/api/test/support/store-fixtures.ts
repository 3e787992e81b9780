import { StoreRows } from '@petstore/testing';
import type { Client } from 'pg';
import { ADMIN_KEY, TestApp, TestResponse } from './test-app';

export type PetStatus = 'available' | 'pending' | 'sold';

/**
 * Object mothers of the store's HTTP tests: pets with a given stock, orders, and a direct look
 * at the rows (SQL) to check what the API says against what the database holds.
 */
export class StoreFixtures {
  private categoryId?: Promise<number>;
  private petCount = 0;

  private constructor(
    readonly api: TestApp,
    /** The rows as the database holds them (SQL beside HTTP). */
    readonly rows: StoreRows,
  ) {}

  static async on(api: TestApp): Promise<StoreFixtures> {
    return new StoreFixtures(api, await StoreRows.on(api.databaseUrl));
  }

  /** A connection to the test's database, for what the fixtures do not read. */
  get db(): Client {
    return this.rows.db;
  }

  close(): Promise<void> {
    return this.rows.close();
  }

  private category(): Promise<number> {
    this.categoryId ??= this.api
      .post('/categories', { key: ADMIN_KEY, body: { name: `Store kind ${Date.now()}-${Math.random()}` } })
      .then((r) => {
        if (r.status !== 201) throw new Error(`category: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.id as number;
      });
    return this.categoryId;
  }

  /** A pet (created `status`, default available) whose stock is then set to `quantity` if given. */
  async pet(options: { status?: PetStatus; quantity?: number } = {}): Promise<number> {
    const body: Record<string, unknown> = { name: `Pet ${++this.petCount}`, categoryId: await this.category() };
    if (options.status) body['status'] = options.status;
    const created = await this.api.post('/pets', { key: ADMIN_KEY, body });
    if (created.status !== 201) throw new Error(`pet: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.id as number;
    if (options.quantity !== undefined) await this.setStock(id, options.quantity);
    return id;
  }

  async setStock(petId: number, quantity: number): Promise<TestResponse> {
    const response = await this.api.put(`/store/inventory/${petId}`, { key: ADMIN_KEY, body: { quantity } });
    if (response.status !== 200) throw new Error(`set stock: ${response.status} ${JSON.stringify(response.body)}`);
    return response;
  }

  order(key: string, body: unknown, headers?: Record<string, string>): Promise<TestResponse> {
    return this.api.post('/store/orders', { key, body, headers });
  }

  /** Places an order that must succeed; returns its id. */
  async placed(key: string, petId: number, quantity = 1): Promise<number> {
    const response = await this.order(key, { petId, quantity });
    if (response.status !== 201) throw new Error(`order: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.id as number;
  }

  /** The pet's stock row and status as the database holds them. */
  async stock(petId: number): Promise<{ quantity: number; status: PetStatus }> {
    const { quantity, status } = await this.rows.stock(petId);
    return { quantity, status: status as PetStatus };
  }

  /** Orders of the pet in the database: open (placed), completed and withdrawn (cancelled, expired); counts, units. */
  ordersOf(petId: number): ReturnType<StoreRows['ordersOf']> {
    return this.rows.ordersOf(petId);
  }

  orderCount(): Promise<number> {
    return this.rows.orderCount();
  }
}

/** The URL of the next page (`Link: <…>; rel="next"`), or null on the last page. */
export function nextPage(response: TestResponse): string | null {
  const link = response.headers.get('link');
  if (link === null) return null;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  if (!match) throw new Error(`not a next-page link: ${link}`);
  return match[1];
}

import { InterceptorsConsumer } from '@nestjs/core/interceptors/interceptors-consumer';
import { ADMIN_KEY, TestApp } from './support/test-app';

/**
 * Nest builds an interceptor chain (an ExecutionContext, rxjs Observables, AsyncResource.bind)
 * only for a route that has interceptors. No route has one: no global interceptor is registered, so a plain read
 * gets its handler called directly, and a POST too: Idempotency-Key is applied by its handler, wrapped at start-up
 * (applyIdempotencyToWrites), not by an interceptor.
 */
describe('request pipeline (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let customer: string;
  const chains = jest.spyOn(
    InterceptorsConsumer.prototype as unknown as { createContext: () => unknown },
    'createContext',
  );

  beforeAll(async () => {
    api = await TestApp.start();
    customer = (await api.customer()).key;
    for (const name of ['Dogs', 'Cats', 'Birds']) await api.post('/categories', { key: ADMIN_KEY, body: { name } });
  });
  afterAll(async () => {
    chains.mockRestore();
    await api.close();
  });
  beforeEach(() => chains.mockClear());

  it('runs no interceptor chain for a list (still paginated: array body and Link)', async () => {
    const page = await api.get('/categories?limit=2', { key: customer });
    expect(page.status).toBe(200);
    expect(page.body).toHaveLength(2);
    expect(page.headers.get('link')).toMatch(/^<\/categories\?limit=2&cursor=[^>]+>; rel="next"$/);
    const one = await api.get(`/categories/${page.body[0].id}`, { key: customer });
    expect(one.status).toBe(200);
    expect(chains).not.toHaveBeenCalled();
  });

  it('runs no interceptor chain for a POST either, with or without Idempotency-Key (which still replays)', async () => {
    const refused = await api.post('/store/orders', { key: customer, body: {}, headers: { 'Idempotency-Key': 'k-1' } });
    expect(refused.status).toBe(400);
    const plain = await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Fish' } });
    expect(plain.status).toBe(201);
    const send = () =>
      api.post('/categories', { key: ADMIN_KEY, body: { name: 'Frogs' }, headers: { 'Idempotency-Key': 'k-2' } });
    const first = await send();
    const again = await send();
    expect([first.status, again.status, again.headers.get('idempotent-replayed'), again.text]).toEqual([
      201,
      201,
      'true',
      first.text,
    ]);
    expect(chains).not.toHaveBeenCalled();
  });
});

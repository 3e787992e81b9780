import { InterceptorsConsumer } from '@nestjs/core/interceptors/interceptors-consumer';
import { ADMIN_KEY, TestApp } from './support/test-app';

/**
 * Nest builds an interceptor chain (an ExecutionContext, rxjs Observables, AsyncResource.bind)
 * only for a route that has interceptors. No global interceptor is registered, so a plain read
 * gets its handler called directly; POST operations keep theirs (Idempotency-Key, put on every POST at start-up).
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

  it('still runs the idempotency interceptor on a POST', async () => {
    const refused = await api.post('/store/orders', { key: customer, body: {}, headers: { 'Idempotency-Key': 'k-1' } });
    expect(refused.status).toBe(400);
    expect(chains).toHaveBeenCalledTimes(1);
  });
});

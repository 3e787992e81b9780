import { request as httpRequest } from 'node:http';
import { Clock } from '@petstore/application';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

/** PET_BY_ID_DEPRECATED_AT, 2026-11-21T00:00:00Z, in unix seconds (RFC 9745). */
const DEPRECATION = '@1795219200';

function expectDeprecationHeaders(response: TestResponse, sunset: string, petId: string): void {
  expect({
    deprecation: response.headers.get('deprecation'),
    sunset: response.headers.get('sunset'),
    link: response.headers.get('link'),
  }).toEqual({ deprecation: DEPRECATION, sunset, link: `</pets?ids=${petId}>; rel="successor-version"` });
}

async function createPet(api: TestApp): Promise<{ id: number; name: string; categoryId: number; status: string }> {
  const category = await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Dogs' } });
  return (await api.post('/pets', { key: ADMIN_KEY, body: { name: 'Rex', categoryId: category.body.id } })).body;
}

describe('GET /pets/{petId} before its sunset (HTTP, real PostgreSQL)', () => {
  const SUNSET = new Date('2999-01-01T00:00:00Z');
  const SUNSET_HEADER = 'Tue, 01 Jan 2999 00:00:00 GMT';
  let api: TestApp;
  let customer: string;
  let pet: { id: number; name: string; categoryId: number; status: string };

  beforeAll(async () => {
    api = await TestApp.start({ deprecations: { petByIdSunset: SUNSET } });
    customer = (await api.customer()).key;
    pet = await createPet(api);
  });
  afterAll(() => api.close());

  it('answers 200 with the pet and the Deprecation, Sunset and successor Link headers', async () => {
    const response = await api.get(`/pets/${pet.id}`, { key: customer });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(pet);
    expectDeprecationHeaders(response, SUNSET_HEADER, String(pet.id));
    const successor = await api.get(`/pets?ids=${pet.id}`, { key: customer });
    expect(successor.body).toEqual([pet]);
  });

  it('sends the headers on a 404', async () => {
    const response = await api.get('/pets/424242', { key: customer });
    expectError(response, 404, 'not_found');
    expectDeprecationHeaders(response, SUNSET_HEADER, '424242');
  });

  it.each([
    ['no key', undefined],
    ['an unknown key', 'psk_unknownunknownunknownunknownunknownunknown12'],
  ])('sends the headers on a 401 (%s), which the guard answers', async (_, key) => {
    const response = await api.get(`/pets/${pet.id}`, { key });
    expectError(response, 401, 'unauthorized');
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="petstore"');
    expectDeprecationHeaders(response, SUNSET_HEADER, String(pet.id));
  });

  it.each(['abc', '0', '9223372036854775808'])('sends the headers on a 400 (petId %s)', async (id) => {
    const response = await api.get(`/pets/${id}`, { key: customer });
    expectError(response, 400, 'validation_failed');
    expectDeprecationHeaders(response, SUNSET_HEADER, id);
  });

  it('sends the headers on a 400 raised by a Fastify hook before NestJS (a GET with a body)', async () => {
    const { status, headers, body } = await new Promise<{
      status: number;
      headers: Record<string, unknown>;
      body: string;
    }>((resolve, reject) => {
      const url = new URL(`/pets/${pet.id}`, api.baseUrl);
      const req = httpRequest(
        url,
        {
          method: 'GET',
          headers: { authorization: `Bearer ${customer}`, 'content-type': 'text/plain', 'content-length': '5' },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        },
      );
      req.on('error', reject);
      req.end('hello');
    });
    expect(status).toBe(400);
    // A GET takes no body: refused by an onRequest hook, before NestJS.
    expect(JSON.parse(body)).toEqual(expect.objectContaining({ code: 'validation_failed', status: 400 }));
    expect([headers['deprecation'], headers['sunset'], headers['link']]).toEqual([
      DEPRECATION,
      SUNSET_HEADER,
      `</pets?ids=${pet.id}>; rel="successor-version"`,
    ]);
  });

  it('URL-encodes the path parameter in the successor Link', async () => {
    const response = await api.get('/pets/a%3E%3B%20b', { key: customer });
    expectError(response, 400, 'validation_failed');
    expect(response.headers.get('link')).toBe('</pets?ids=a%3E%3B%20b>; rel="successor-version"');
  });

  it('leaves the other operations alone', async () => {
    for (const response of [
      await api.get(`/pets?ids=${pet.id}`, { key: customer }),
      await api.patch(`/pets/${pet.id}`, { key: ADMIN_KEY, body: { name: 'Rex' } }),
      await api.get('/categories', { key: customer }),
    ]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('deprecation')).toBeNull();
      expect(response.headers.get('sunset')).toBeNull();
    }
  });

  it('decides the sunset with the clock at request time', async () => {
    const clock = api.app.get(Clock);
    const now = jest.spyOn(clock, 'now').mockReturnValue(SUNSET);
    try {
      const response = await api.get(`/pets/${pet.id}`, { key: customer });
      expectError(response, 410, 'operation_sunset');
      expectDeprecationHeaders(response, SUNSET_HEADER, String(pet.id));
    } finally {
      now.mockRestore();
    }
    expect((await api.get(`/pets/${pet.id}`, { key: customer })).status).toBe(200);
  });

  it('is described as deprecated, with x-sunset, the headers and the 410', async () => {
    const doc = (await api.get('/openapi.json')).body;
    const operation = doc.paths['/pets/{petId}'].get;
    expect(operation.deprecated).toBe(true);
    expect(operation['x-sunset']).toBe('2999-01-01T00:00:00.000Z');
    expect(operation.description).toContain('/pets?ids={petId}');
    expect(Object.keys(operation)).not.toContain('x-petstore-deprecation');
    // The Error, its code narrowed to the one a 410 carries here.
    expect(operation.responses['410'].content['application/json'].schema).toEqual({
      allOf: [
        { $ref: '#/components/schemas/Error' },
        { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: ['operation_sunset'] } } },
      ],
    });
    for (const [status, response] of Object.entries<any>(operation.responses)) {
      expect([status, Object.keys(response.headers)]).toEqual([
        status,
        expect.arrayContaining(['Deprecation', 'Sunset', 'Link']),
      ]);
    }
    // Only this operation is deprecated.
    const deprecated = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
      Object.entries<any>(item)
        .filter(([, op]) => op.deprecated || op['x-sunset'])
        .map(([method]) => `${method} ${path}`),
    );
    expect(deprecated).toEqual(['get /pets/{petId}']);
  });
});

describe('GET /pets/{petId} after its sunset (HTTP, real PostgreSQL)', () => {
  const SUNSET_HEADER = 'Wed, 01 Jan 2020 00:00:00 GMT';
  let api: TestApp;
  let pet: { id: number };

  beforeAll(async () => {
    api = await TestApp.start({ deprecations: { petByIdSunset: new Date('2020-01-01T00:00:00Z') } });
    pet = await createPet(api);
  });
  afterAll(() => api.close());

  it.each([
    ['an existing pet', () => String(pet.id), ADMIN_KEY],
    ['a missing pet', () => '424242', ADMIN_KEY],
    ['an invalid id', () => 'abc', ADMIN_KEY],
    ['no key', () => String(pet.id), undefined],
  ])('answers 410 operation_sunset for %s, still with the headers', async (_, id, key) => {
    const response = await api.get(`/pets/${id()}`, { key });
    expectError(response, 410, 'operation_sunset');
    expect(response.body.message).toContain(`/pets?ids=${id()}`);
    expectDeprecationHeaders(response, SUNSET_HEADER, id());
  });

  it('still serves the successor and the other pet operations', async () => {
    expect((await api.get(`/pets?ids=${pet.id}`, { key: ADMIN_KEY })).body).toEqual([
      expect.objectContaining({ id: pet.id }),
    ]);
    expect((await api.patch(`/pets/${pet.id}`, { key: ADMIN_KEY, body: { name: 'Max' } })).status).toBe(200);
  });

  it('puts the configured sunset in x-sunset', async () => {
    const doc = (await api.get('/openapi.json')).body;
    expect(doc.paths['/pets/{petId}'].get['x-sunset']).toBe('2020-01-01T00:00:00.000Z');
  });
});

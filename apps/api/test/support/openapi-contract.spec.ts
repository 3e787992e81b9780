import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpenApiContract } from './openapi-contract';

/** The response-header half of the contract every HTTP test applies (on the committed description). */
describe('OpenApiContract: response headers', () => {
  const contract = new OpenApiContract(
    JSON.parse(readFileSync(join(__dirname, '../../../../docs/openapi.json'), 'utf8')),
  );
  const pets = [{ id: 1, name: 'Rex', categoryId: 1, status: 'available', createdAt: '2026-11-21T10:00:00.000Z' }];
  const CODES: Record<number, string> = { 401: 'unauthorized', 429: 'rate_limited' };
  const error = (status: number, code = CODES[status]) => ({ code, message: 'x', status });
  const check = (path: string, status: number, body: unknown, headers: Record<string, string>) =>
    contract.check('GET', path, status, 'application/json', body, new Headers(headers));

  it('accepts the headers an operation declares for the status', () => {
    expect(
      check('/pets', 200, pets, {
        'x-request-id': 'r1',
        'cache-control': 'no-store',
        etag: 'W/"p1"',
        link: '</pets?cursor=a>; rel="next"',
      }),
    ).toEqual([]);
    expect(check('/pets', 429, error(429), { 'x-request-id': 'r1', 'retry-after': '3' })).toEqual([]);
    expect(
      check('/pets', 401, error(401), { 'x-request-id': 'r1', 'www-authenticate': 'Bearer realm="petstore"' }),
    ).toEqual([]);
  });

  it('refuses an API header the response does not declare, and a missing required one', () => {
    expect(check('/pets', 200, pets, { 'x-request-id': 'r1', etag: 'W/"p1"', 'retry-after': '3' })).toEqual([
      'GET /pets 200 sent retry-after, which it does not declare',
    ]);
    expect(check('/pets', 401, error(401), { 'x-request-id': 'r1', deprecation: '@1' })).toEqual([
      'GET /pets 401 sent deprecation, which it does not declare',
    ]);
    expect(check('/pets', 200, pets, {})).toEqual([
      'GET /pets 200 did not send x-request-id',
      'GET /pets 200 did not send etag',
    ]);
  });

  it('refuses an error code the operation does not list for the status', () => {
    const headers = { 'x-request-id': 'r1', 'retry-after': '3' };
    expect(check('/pets', 429, error(429, 'too_many_auth_failures'), headers)).toEqual([]);
    expect(check('/pets', 429, error(429, 'not_found'), headers)).toEqual([
      expect.stringContaining('GET /pets 429: /code must be equal to one of the allowed values'),
    ]);
  });
});

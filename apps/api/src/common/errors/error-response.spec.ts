import { Client } from 'pg';
import { CategoryNameTakenError, InvalidValueError, NotFoundError, UnknownCategoryError } from '@petstore/domain';
import { ApiError } from './api-error';
import { toErrorResponse } from './error-response';

describe('toErrorResponse', () => {
  it('maps domain errors by kind', () => {
    expect(toErrorResponse(new CategoryNameTakenError('Dogs')).body).toMatchObject({ status: 409, code: 'category_name_taken' });
    expect(toErrorResponse(new UnknownCategoryError(3)).body).toMatchObject({ status: 422, code: 'unknown_category' });
    expect(toErrorResponse(new NotFoundError('Pet', 3)).body).toMatchObject({ status: 404, code: 'not_found' });
    expect(toErrorResponse(new InvalidValueError('name', 'name is too long')).body).toEqual({
      status: 400,
      code: 'validation_failed',
      message: 'name is too long',
      details: [{ field: 'name', message: 'name is too long' }],
    });
  });

  it('keeps an ApiError as it is, with its headers', () => {
    const response = toErrorResponse(ApiError.unauthorized());
    expect(response.body).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(response.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="petstore"' });
  });

  it('answers an unreachable database with 503 and Retry-After', async () => {
    const client = new Client({ connectionString: 'postgres://nobody@127.0.0.1:1/none', connectionTimeoutMillis: 2000 });
    const error = await client.connect().then(
      () => null,
      (e: unknown) => e,
    );
    const response = toErrorResponse(error);
    expect(response.body).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(response.headers['Retry-After']).toBe('5');
  });

  it('answers anything unexpected with a 500 that says nothing of it', () => {
    const response = toErrorResponse(new TypeError("Cannot read properties of undefined (reading 'secret')"));
    expect(response.unexpected).toBe(true);
    expect(response.body).toEqual({ status: 500, code: 'internal_error', message: expect.not.stringMatching(/secret|undefined/) });
  });
});

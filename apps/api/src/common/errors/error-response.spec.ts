import {
  ConcurrentUpdateError,
  ConstraintViolationError,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  InvalidStoredValueError,
  StoreUnavailableError,
} from '@petstore/application';
import { CategoryNameTakenError, InvalidValueError, NotFoundError, UnknownCategoryError } from '@petstore/domain';
import { ApiError } from './api-error';
import { ERROR_CODES, type PublicErrorCode } from './error-codes';
import { errorDocsPage } from './error-docs';
import { toErrorResponse } from './error-response';

describe('toErrorResponse', () => {
  it('maps domain errors by kind', () => {
    expect(toErrorResponse(new CategoryNameTakenError('Dogs')).body).toMatchObject({
      status: 409,
      code: 'category_name_taken',
    });
    expect(toErrorResponse(new UnknownCategoryError(3)).body).toMatchObject({ status: 422, code: 'unknown_category' });
    expect(toErrorResponse(new NotFoundError('Pet', 3)).body).toMatchObject({ status: 404, code: 'not_found' });
    expect(toErrorResponse(new InvalidValueError('name', 'name is too long')).body).toEqual({
      status: 400,
      code: 'validation_failed',
      message: 'name is too long',
      details: [{ field: 'name', message: 'name is too long' }],
      documentationUrl: '/docs/errors#validation_failed',
    });
  });

  it("maps the application's own errors by kind, not by what they were made for", () => {
    expect(toErrorResponse(new IdempotencyKeyInUseError()).body).toMatchObject({
      status: 409,
      code: 'idempotency_key_in_use',
    });
    expect(toErrorResponse(new IdempotencyKeyReusedError()).body).toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
    });
  });

  it('keeps an ApiError as it is, with its headers', () => {
    const response = toErrorResponse(ApiError.unauthorized());
    expect(response.body).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(response.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="petstore"' });
  });

  it('answers an unreachable database with 503 and Retry-After', () => {
    const response = toErrorResponse(new StoreUnavailableError('unreachable', 'The database cannot be reached.'));
    expect(response.body).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(response.headers['Retry-After']).toBe('5');
  });

  it('maps the other persistence errors without reading any driver detail', () => {
    expect(toErrorResponse(new ConcurrentUpdateError('deadlock')).body).toMatchObject({
      status: 503,
      code: 'service_unavailable',
    });
    expect(toErrorResponse(new ConstraintViolationError('unique', 'x_key', 'unique')).body).toMatchObject({
      status: 409,
      code: 'conflict',
    });
    expect(toErrorResponse(new InvalidStoredValueError('bad text')).body).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
  });

  it('no longer recognises a raw driver error: only the infrastructure translates them', () => {
    const raw = Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNREFUSED' });
    expect(toErrorResponse(raw).body).toMatchObject({ status: 500, code: 'internal_error' });
  });

  it('answers anything unexpected with a 500 that says nothing of it', () => {
    const response = toErrorResponse(new TypeError("Cannot read properties of undefined (reading 'secret')"));
    expect(response.unexpected).toBe(true);
    expect(response.body).toEqual({
      status: 500,
      code: 'internal_error',
      message: expect.not.stringMatching(/secret|undefined/),
      documentationUrl: '/docs/errors#internal_error',
    });
  });

  it('links every code to its entry in the served list (documentationUrl), each entry anchored by its code', () => {
    const page = errorDocsPage();
    for (const code of Object.keys(ERROR_CODES) as PublicErrorCode[]) {
      expect(toErrorResponse(new ApiError(ERROR_CODES[code][0], code, 'x')).body.documentationUrl).toBe(
        `/docs/errors#${code}`,
      );
      expect(page).toContain(`<section id="${code}">\n<h3><code>${code}</code> (${ERROR_CODES[code][0]})</h3>`);
    }
    // The table says when each code comes (docs/api.md's errors table, as HTML), and leads to its entry.
    expect(page).toContain(
      '<tr><td>409</td><td><a href="#insufficient_stock"><code>insufficient_stock</code></a></td>' +
        '<td>ordering more units than are in stock</td></tr>',
    );
    expect(page).toContain('<code>MAX_OPEN_UNITS_PER_CUSTOMER</code>');
    expect(page).not.toMatch(/<script|<style|\]\(/);
  });
});

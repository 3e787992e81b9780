import type { FastifyRequest } from 'fastify';
import { CORS_EXPOSED_HEADERS, corsHeadersBeforeCors } from './http-semantics.hooks';

/** The CORS headers of an answer given before the CORS hook (admission's refusal), for each CORS_ORIGINS. */
describe('corsHeadersBeforeCors', () => {
  const request = (method: string, origin?: string) =>
    ({ method, headers: origin === undefined ? {} : { origin } }) as unknown as FastifyRequest;
  const exposed = CORS_EXPOSED_HEADERS.join(', ');

  it('adds nothing without CORS_ORIGINS', () => {
    expect(corsHeadersBeforeCors([])).toBeUndefined();
  });

  it('with a list: the allowed origin is named back, another gets Vary only', () => {
    const headers = corsHeadersBeforeCors(['https://shop.example']);
    expect(headers?.(request('POST', 'https://shop.example'))).toEqual({
      'access-control-allow-origin': 'https://shop.example',
      'access-control-expose-headers': exposed,
      vary: 'Origin',
    });
    expect(headers?.(request('GET', 'https://shop.example.evil'))).toEqual({ vary: 'Origin' });
    expect(headers?.(request('GET'))).toEqual({ vary: 'Origin' });
  });

  it("with '*': reads from any origin, nothing on a write (as the CORS hook)", () => {
    const headers = corsHeadersBeforeCors('*');
    expect(headers?.(request('GET', 'https://any.example'))).toEqual({
      'access-control-allow-origin': '*',
      'access-control-expose-headers': exposed,
    });
    expect(headers?.(request('POST', 'https://any.example'))).toBeUndefined();
    expect(headers?.(request('GET'))).toBeUndefined();
  });
});

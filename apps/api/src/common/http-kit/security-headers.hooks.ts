import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import helmet, { HelmetOptions } from 'helmet';

/** The description and its viewer: public, the same for everyone, and a page a browser runs. */
export const DOCUMENTATION_URL = /^\/(?:openapi\.(?:json|yaml)|docs(?:[/?#-]|$))/;

/**
 * A JSON API is never a page: no content of its own may run, be framed or be sniffed as
 * something else (OWASP REST Security: `default-src 'none'; frame-ancestors 'none'`).
 */
export const API_CSP = { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } };

/**
 * Swagger UI (/docs) runs its own scripts and styles, fetches /openapi.json and "Try it out"
 * calls the API, all from this origin; its CSS uses inline styles and data: images.
 */
export const DOCS_CSP = {
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
};

/** helmet's options for the API; the documentation routes take DOCS_CSP instead of API_CSP. */
const HELMET_OPTIONS: HelmetOptions = { contentSecurityPolicy: API_CSP, frameguard: { action: 'deny' } };

/** Response headers as set on Node's response: name as given, value. */
export type HeaderSet = Readonly<Record<string, string>>;

/**
 * The headers helmet's middleware sets with these options, produced by running it once against a
 * response that only records them. With static options (no nonces, no functions in the CSP) the
 * middleware sets the same headers with the same values on every response; the one thing it
 * removes, X-Powered-By, Fastify never sets.
 */
export function helmetHeaders(options: HelmetOptions): HeaderSet {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string) {
      headers[name] = value;
    },
    removeHeader(name: string) {
      delete headers[name];
    },
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return Object.freeze(headers);
}

/**
 * The API's security headers with `Cache-Control: no-store`: what every API answer carries, computed once. The
 * framework's own answers (common/errors/framework-errors.ts), which no hook sees, set them from here too.
 */
export const API_RESPONSE_HEADERS: HeaderSet = Object.freeze({
  ...helmetHeaders(HELMET_OPTIONS),
  'Cache-Control': 'no-store',
});

/** Where the documentation routes keep their header set (route config, set when the route is added). */
const DOCS_HEADERS_KEY = 'petstoreSecurityHeaders';

/**
 * Response headers every response carries:
 * - helmet's (X-Content-Type-Options: nosniff, X-Frame-Options: DENY, Referrer-Policy: no-referrer,
 *   Strict-Transport-Security, Cross-Origin-*-Policy, no X-Powered-By…) with the CSP above, and
 *   the relaxed one on the documentation routes;
 * - `Cache-Control: no-store` on every response but the documentation: every API response is
 *   either per account (authenticated) or carries a secret (sign-up, new API key) or is a probe
 *   or an error that must not be reused, so no cache, shared or private, may keep any of them.
 * Registered before the routes, so that the documentation routes get their own CSP.
 *
 * Not @fastify/helmet: it builds helmet's middleware again (options, CSP string) on every request
 * and runs two hooks for it, for headers that never change (about 5% of a small request's CPU). Here
 * helmet's own code computes the two header sets once, at start, and one synchronous hook sets them.
 */
export async function registerSecurityHeaders(app: NestFastifyApplication): Promise<void> {
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  const apiHeaders = API_RESPONSE_HEADERS;
  const docsHeaders = helmetHeaders({ ...HELMET_OPTIONS, contentSecurityPolicy: DOCS_CSP });
  fastify.addHook('onRoute', (route) => {
    if (DOCUMENTATION_URL.test(route.url)) {
      route.config = { ...route.config, [DOCS_HEADERS_KEY]: docsHeaders } as typeof route.config;
    }
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    const config = request.routeOptions.config as { [DOCS_HEADERS_KEY]?: HeaderSet } | undefined;
    const docs = config?.[DOCS_HEADERS_KEY];
    // The documentation routes take their own set, without no-store; an unknown URL under /docs is the API's 404.
    void reply.headers(docs ?? apiHeaders);
    if (docs && !DOCUMENTATION_URL.test(request.url)) void reply.header('Cache-Control', 'no-store');
    done();
  });
}

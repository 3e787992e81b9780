import helmet from '@fastify/helmet';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';

/** The description and its viewer: public, the same for everyone, and a page a browser runs. */
export const DOCUMENTATION_URL = /^\/(?:openapi\.(?:json|yaml)|docs(?:[/?#-]|$))/;

/**
 * A JSON API is never a page: no content of its own may run, be framed or be sniffed as
 * something else (OWASP REST Security: `default-src 'none'; frame-ancestors 'none'`).
 */
const API_CSP = { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } };

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

/**
 * Response headers every response carries:
 * - helmet's (X-Content-Type-Options: nosniff, X-Frame-Options: DENY, Referrer-Policy: no-referrer,
 *   Strict-Transport-Security, Cross-Origin-*-Policy, no X-Powered-By…) with the CSP above, and
 *   the relaxed one on the documentation;
 * - `Cache-Control: no-store` on every response but the documentation: every API response is
 *   either per account (authenticated) or carries a secret (sign-up, new API key) or is a probe
 *   or an error that must not be reused, so no cache, shared or private, may keep any of them.
 * Registered before the routes, so that the documentation routes get their own CSP.
 */
export async function registerSecurityHeaders(app: NestFastifyApplication): Promise<void> {
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  fastify.addHook('onRoute', (route) => {
    // helmet reads `config.helmet`; its types do not add it to FastifyContextConfig (@fastify/compress's add theirs).
    const config = { ...route.config, helmet: { contentSecurityPolicy: DOCS_CSP } } as typeof route.config;
    if (DOCUMENTATION_URL.test(route.url)) route.config = config;
  });
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: API_CSP,
    frameguard: { action: 'deny' },
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!DOCUMENTATION_URL.test(request.url)) void reply.header('Cache-Control', 'no-store');
    done();
  });
}

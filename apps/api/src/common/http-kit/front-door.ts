import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';

/** What Fastify passes its serverFactory: its options, defaults applied (fastify.js). */
interface ServerSettings {
  http?: ServerOptions;
  keepAliveTimeout?: number;
  requestTimeout?: number;
  connectionTimeout?: number;
  maxRequestsPerSocket?: number;
}

/** A request listener that may answer itself or hand the request on to `next` (now or later). */
export type Gate = (next: RequestListener<typeof IncomingMessage, typeof ServerResponse>) => RequestListener;

/**
 * The HTTP server's request listener, in front of Fastify's: what may answer a request before Fastify makes a request
 * and a reply of it (admission, `common/admission`: under overload an instance refuses about as many requests as it
 * serves, and a refusal through Fastify's hooks cost three times what Node alone takes). Fastify builds its server
 * through `serverFactory` (create-app.ts); the gate is installed once the application exists (assembly/pipeline.ts),
 * and until then, or without one, every request goes straight to Fastify.
 */
export class FrontDoor {
  private listener: RequestListener | null = null;
  private fastify: RequestListener | null = null;

  /**
   * Fastify's `serverFactory`: the server Fastify would make itself (lib/server.js: `http.createServer(options.http)`,
   * then the keep-alive, request and connection timeouts and the requests per socket), with this door's listener.
   * Fastify's own listener (`handler`) is what the gate hands requests on to. Secondary servers (a `localhost` bind
   * on IPv4 and IPv6) are made here too.
   */
  readonly serverFactory = (handler: RequestListener, options: ServerSettings): Server => {
    this.fastify = handler;
    this.listener ??= handler;
    const server = createServer(options.http ?? {}, (request, response) =>
      (this.listener as RequestListener)(request, response),
    );
    if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
    if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
    if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };

  /** Puts `gate` in front of Fastify's listener (once: a second gate would replace the first). */
  install(gate: Gate): void {
    if (!this.fastify) throw new Error('FrontDoor.install: no server was made through serverFactory');
    this.listener = gate(this.fastify);
  }
}

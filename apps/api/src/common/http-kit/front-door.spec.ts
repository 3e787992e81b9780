import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { FrontDoor } from './front-door';

/** Fastify's server, made through the door: the server Fastify would make, and what is installed answers first. */
describe('FrontDoor', () => {
  it("makes the server with Fastify's http options and timeouts; Fastify answers until a gate is in", async () => {
    const door = new FrontDoor();
    const fastify = Fastify({
      serverFactory: door.serverFactory,
      keepAliveTimeout: 4321,
      requestTimeout: 9876,
      connectionTimeout: 5555,
      maxRequestsPerSocket: 7,
      http: { headersTimeout: 3333, requireHostHeader: false },
    });
    fastify.get('/x', async () => ({ from: 'fastify' }));
    try {
      const server = fastify.server;
      expect([server.keepAliveTimeout, server.requestTimeout, server.timeout, server.maxRequestsPerSocket]).toEqual([
        4321, 9876, 5555, 7,
      ]);
      expect(server.headersTimeout).toBe(3333);
      await fastify.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect(await (await fetch(`${url}/x`)).json()).toEqual({ from: 'fastify' });

      door.install((next) => (request, response) => {
        if (request.url === '/gate') return response.end('gate');
        next(request, response);
      });
      expect(await (await fetch(`${url}/gate`)).text()).toBe('gate');
      expect(await (await fetch(`${url}/x`)).json()).toEqual({ from: 'fastify' });
    } finally {
      await fastify.close();
    }
  });

  it('refuses a gate before Fastify has made its server', () => {
    expect(() => new FrontDoor().install((next) => next)).toThrow(/serverFactory/);
  });
});

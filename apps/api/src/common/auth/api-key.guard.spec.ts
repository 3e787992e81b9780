import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Auth, Public } from './auth.decorators';
import { ApiKeyGuard } from './api-key.guard';
import { BearerStrategy } from './bearer.strategy';

@Auth()
class Pets {
  list(): string {
    return 'list';
  }
  @Public()
  open(): string {
    return 'open';
  }
  @Auth('admin')
  remove(): string {
    return 'remove';
  }
}

/** The same handler function on another controller (a shared method): its own requirement. */
class Everyone {}
Public()(Everyone);

const context = (handler: (...args: never[]) => unknown, controller: object, request: object) =>
  ({
    getHandler: () => handler,
    getClass: () => controller,
    getArgByIndex: () => request,
    switchToHttp: () => ({ getRequest: () => request }),
  }) as unknown as ExecutionContext;

describe('ApiKeyGuard', () => {
  const customer = { id: 1, isAdmin: false };
  const fullKey = { account: customer, keyId: 1, scopes: ['full'], expiresAt: null };
  const bearer = {
    authenticateRequest: jest.fn(async (): Promise<object> => ({ account: customer, key: fullKey })),
  };
  const reflector = new Reflector();
  const lookUp = jest.spyOn(reflector, 'getAllAndOverride');
  const guard = new ApiKeyGuard(reflector, bearer as unknown as BearerStrategy);

  it('reads each handler’s requirement once and applies it on every request', async () => {
    for (let i = 0; i < 3; i++) {
      const request: { method: string; user?: unknown; apiKey?: unknown } = { method: 'GET' };
      await expect(guard.canActivate(context(Pets.prototype.list, Pets, request))).resolves.toBe(true);
      expect(request.user).toBe(customer);
      expect(request.apiKey).toBe(fullKey);
      await expect(guard.canActivate(context(Pets.prototype.open, Pets, {}))).resolves.toBe(true);
      await expect(guard.canActivate(context(Pets.prototype.remove, Pets, {}))).rejects.toMatchObject({
        status: 403,
      });
    }
    expect(lookUp).toHaveBeenCalledTimes(3);
    expect(bearer.authenticateRequest).toHaveBeenCalledTimes(6);
  });

  it('keeps a handler’s requirement apart per controller', async () => {
    bearer.authenticateRequest.mockClear();
    await expect(guard.canActivate(context(Pets.prototype.list, Everyone, {}))).resolves.toBe(true);
    expect(bearer.authenticateRequest).not.toHaveBeenCalled();
    await expect(guard.canActivate(context(Pets.prototype.list, Pets, {}))).resolves.toBe(true);
    expect(bearer.authenticateRequest).toHaveBeenCalledTimes(1);
  });

  describe('scopes and expiry', () => {
    const admin = { id: 2, isAdmin: true };
    const readKey = (account: object) => ({ account, key: { account, keyId: 2, scopes: ['read'], expiresAt: null } });
    const run = (handler: (...args: never[]) => unknown, method: string) =>
      guard.canActivate(context(handler, Pets, { method }));

    it('a read key may GET and HEAD; any other method is 403 insufficient_scope, naming the scope needed', async () => {
      bearer.authenticateRequest.mockResolvedValue(readKey(customer));
      await expect(run(Pets.prototype.list, 'GET')).resolves.toBe(true);
      await expect(run(Pets.prototype.list, 'HEAD')).resolves.toBe(true);
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        await expect(run(Pets.prototype.list, method)).rejects.toMatchObject({
          status: 403,
          code: 'insufficient_scope',
          message: expect.stringContaining('`full`'),
        });
      }
    });

    it("an administrator's read key is an administrator for reading only", async () => {
      bearer.authenticateRequest.mockResolvedValue(readKey(admin));
      await expect(run(Pets.prototype.remove, 'GET')).resolves.toBe(true);
      await expect(run(Pets.prototype.remove, 'DELETE')).rejects.toMatchObject({ code: 'insufficient_scope' });
    });

    it('a full key may use every method its role allows', async () => {
      bearer.authenticateRequest.mockResolvedValue({ account: customer, key: fullKey });
      await expect(run(Pets.prototype.list, 'DELETE')).resolves.toBe(true);
      await expect(run(Pets.prototype.remove, 'DELETE')).rejects.toMatchObject({ code: 'forbidden' });
    });

    it('an expired key is 401 api_key_expired; an unknown one 401 unauthorized', async () => {
      bearer.authenticateRequest.mockResolvedValue({ account: null, expired: true });
      await expect(run(Pets.prototype.list, 'GET')).rejects.toMatchObject({ status: 401, code: 'api_key_expired' });
      bearer.authenticateRequest.mockResolvedValue({ account: null, expired: false });
      await expect(run(Pets.prototype.list, 'GET')).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    });
  });
});

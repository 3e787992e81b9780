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
  const bearer = { authenticateRequest: jest.fn(async () => ({ account: customer })) };
  const reflector = new Reflector();
  const lookUp = jest.spyOn(reflector, 'getAllAndOverride');
  const guard = new ApiKeyGuard(reflector, bearer as unknown as BearerStrategy);

  it('reads each handler’s requirement once and applies it on every request', async () => {
    for (let i = 0; i < 3; i++) {
      const request: { user?: unknown } = {};
      await expect(guard.canActivate(context(Pets.prototype.list, Pets, request))).resolves.toBe(true);
      expect(request.user).toBe(customer);
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
});

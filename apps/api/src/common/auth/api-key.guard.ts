import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Account } from '@petstore/domain';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { AUTH_METADATA, AuthRequirement } from './auth.decorators';
import { BearerStrategy } from './bearer.strategy';

/** The one guard: Bearer API key → account, then the role the operation asks for. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly bearer: BearerStrategy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requirement = this.reflector.getAllAndOverride<AuthRequirement | undefined>(AUTH_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]) ?? { public: false, role: 'any' };
    if (requirement.public) return true;

    const request = context.switchToHttp().getRequest<FastifyRequest & { user?: Account }>();
    const { account } = await this.bearer.authenticateRequest(request);
    if (!account) throw ApiError.unauthorized();
    if (requirement.role === 'admin' && !account.isAdmin) throw ApiError.forbidden();
    request.user = account;
    return true;
  }
}

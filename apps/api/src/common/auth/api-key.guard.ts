import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Account } from '@petstore/domain';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { AUTH_METADATA, AuthRequirement } from './auth.decorators';
import { BearerStrategy } from './bearer.strategy';

const NEEDS_A_KEY: AuthRequirement = { public: false, role: 'any' };

/** The one guard: Bearer API key → account, then the role the operation asks for. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** The requirement of each handler, read from its metadata once (decorators do not change at run time). */
  private readonly requirements = new WeakMap<object, { controller: object; requirement: AuthRequirement }>();

  constructor(
    private readonly reflector: Reflector,
    private readonly bearer: BearerStrategy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requirement = this.requirementOf(context);
    if (requirement.public) return true;

    const request = context.getArgByIndex<FastifyRequest & { user?: Account }>(0);
    const { account } = await this.bearer.authenticateRequest(request);
    if (!account) throw ApiError.unauthorized();
    if (requirement.role === 'admin' && !account.isAdmin) throw ApiError.forbidden();
    request.user = account;
    return true;
  }

  private requirementOf(context: ExecutionContext): AuthRequirement {
    const handler = context.getHandler();
    const controller = context.getClass();
    const cached = this.requirements.get(handler);
    if (cached?.controller === controller) return cached.requirement;
    const requirement =
      this.reflector.getAllAndOverride<AuthRequirement | undefined>(AUTH_METADATA, [handler, controller]) ??
      NEEDS_A_KEY;
    this.requirements.set(handler, { controller, requirement });
    return requirement;
  }
}

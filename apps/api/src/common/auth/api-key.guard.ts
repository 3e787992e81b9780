import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { VerifiedKey } from '@petstore/application';
import { type Account, type ApiKeyScope, scopesGrant } from '@petstore/domain';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { AUTH_METADATA, AuthRequirement } from './auth.decorators';
import { BearerStrategy } from './bearer.strategy';

const NEEDS_A_KEY: AuthRequirement = { public: false, role: 'any' };

/** The methods a `read` key may use (RFC 9110's safe methods the API has); anything else needs `full`. */
const READ_METHODS = new Set(['GET', 'HEAD']);

/** The scope an HTTP method needs. */
export const scopeFor = (method: string): ApiKeyScope => (READ_METHODS.has(method) ? 'read' : 'full');

/**
 * The one guard: Bearer API key → account (401 `unauthorized`, or `api_key_expired`), then the role the operation
 * asks for (403 `forbidden`), then the key's scope for the method (403 `insufficient_scope`: a `read` key may only
 * GET, so an administrator's `read` key is an administrator for reading only).
 */
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

    const request = context.getArgByIndex<FastifyRequest & { user?: Account; apiKey?: VerifiedKey }>(0);
    const outcome = await this.bearer.authenticateRequest(request);
    if (!outcome.account) throw outcome.expired ? ApiError.apiKeyExpired() : ApiError.unauthorized();
    const { account, key } = outcome;
    if (requirement.role === 'admin' && !account.isAdmin) throw ApiError.forbidden();
    const needed = scopeFor(request.method);
    if (!scopesGrant(key.scopes, needed)) throw ApiError.insufficientScope(needed, key.scopes);
    request.user = account;
    request.apiKey = key;
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

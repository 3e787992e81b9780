import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { VerifiedKey } from '@petstore/application';
import type { Account, Role } from '@petstore/domain';
import { ErrorResponseDto } from '../errors/error.response.dto';

export const AUTH_METADATA = 'petstore:auth';
export type AuthRequirement = { public: true } | { public: false; role: Role | 'any' };
export const BEARER_SCHEME = 'bearer';

/**
 * Who may call an operation: `@Auth()` any valid key, `@Auth('admin')` an administrator.
 * The one guard enforces it, and the same decorator writes the OpenAPI security requirement.
 */
export function Auth(role: Role | 'any' = 'any'): MethodDecorator & ClassDecorator {
  const decorators = [
    SetMetadata(AUTH_METADATA, { public: false, role } satisfies AuthRequirement),
    ApiBearerAuth(BEARER_SCHEME),
    ApiUnauthorizedResponse({
      description:
        'The API key is missing, unknown, revoked or not a Bearer credential (`unauthorized`); ' +
        'or it has expired (`api_key_expired`).',
      type: ErrorResponseDto,
    }),
  ];
  if (role === 'admin') {
    decorators.push(
      ApiForbiddenResponse({
        description: "The API key is not an administrator's (`forbidden`).",
        type: ErrorResponseDto,
      }),
    );
  }
  return applyDecorators(...decorators);
}

/** No API key needed. */
export function Public(): MethodDecorator & ClassDecorator {
  return SetMetadata(AUTH_METADATA, { public: true } satisfies AuthRequirement);
}

/** The API key that authenticated the request (its id, scopes, expiry). */
export const CurrentApiKey = createParamDecorator((_: unknown, context: ExecutionContext): VerifiedKey => {
  return context.switchToHttp().getRequest<{ apiKey: VerifiedKey }>().apiKey;
});

/** The account whose API key authenticated the request. */
export const CurrentAccount = createParamDecorator((_: unknown, context: ExecutionContext): Account => {
  return context.switchToHttp().getRequest<{ user: Account }>().user;
});

import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/errors/error.response.dto';

/**
 * Documents the operation-specific error statuses with the Error schema, e.g.
 * `@ApiErrors({ 409: 'category_name_taken: …' })`. The statuses every operation
 * shares (400 for parameters and bodies, 401, 413, 429, 500, 503) are added by
 * `completeDocument`, so they are never forgotten.
 */
export function ApiErrors(statuses: Record<number, string>): MethodDecorator {
  return applyDecorators(
    ...Object.entries(statuses).map(([status, description]) =>
      ApiResponse({ status: Number(status), description, type: ErrorResponseDto }),
    ),
  );
}

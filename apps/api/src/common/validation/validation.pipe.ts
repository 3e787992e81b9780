import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError, ErrorDetail } from '../errors/api-error';

/**
 * The one validation pipe: unknown fields are refused, values are transformed into
 * the DTO classes, and every failure is a 400 `validation_failed` with one detail a field.
 */
export function createValidationPipe(): ValidationPipe {
  return new DtoValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors: ValidationError[]) => {
      const details = flatten(errors);
      const message = details.length
        ? `The request is invalid: ${details.map((d) => d.message).join('; ')}.`
        : 'The request body must be a JSON object.';
      return ApiError.validation(
        message,
        details.length ? details : [{ field: 'body', message: 'must be a JSON object' }],
      );
    },
  });
}

function flatten(errors: ValidationError[], parent = ''): ErrorDetail[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field,
      message: error.constraints?.['whitelistValidation'] === message ? `${field} is not a known field` : message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * Path parameters are left as the strings they came as: their own pipe (ParseIdPipe)
 * decides, and must not see `1e3` already turned into 1000.
 */
class DtoValidationPipe extends ValidationPipe {
  protected override transformPrimitive(value: unknown, metadata: ArgumentMetadata): unknown {
    return metadata.type === 'param' ? value : super.transformPrimitive(value, metadata);
  }
}

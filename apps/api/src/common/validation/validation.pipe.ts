import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError, ErrorDetail } from '../errors/api-error';

/** At most this many `details` in one answer; the message says how many problems there were in all. */
export const MAX_VALIDATION_DETAILS = 20;
/** A field path longer than this (a client's key can be kilobytes) is cut in the answer. */
const MAX_FIELD_LENGTH = 100;
/** The messages the error's `message` repeats; the rest are in `details`. */
const MESSAGES_IN_SUMMARY = 3;

const NOT_AN_OBJECT = (): ApiError =>
  ApiError.validation('The request body must be a JSON object.', [{ field: 'body', message: 'must be a JSON object' }]);

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
      if (!details.length) return NOT_AN_OBJECT();
      return ApiError.validation(summary(details), details.slice(0, MAX_VALIDATION_DETAILS));
    },
  });
}

/**
 * A short message whatever the body: the first problems, and how many there were in all. Every answer is bounded
 * (a 64 KiB body of 32,000 unknown fields used to answer 2.7 MB and hold the event loop for 100 ms).
 */
function summary(details: ErrorDetail[]): string {
  const shown = details.slice(0, MESSAGES_IN_SUMMARY).map((d) => d.message);
  const more = details.length - shown.length;
  const rest = more > 0 ? `; and ${more} more (${Math.min(details.length, MAX_VALIDATION_DETAILS)} in details)` : '';
  return `The request is invalid: ${shown.join('; ')}${rest}.`;
}

const shortField = (field: string) =>
  field.length > MAX_FIELD_LENGTH ? `${field.slice(0, MAX_FIELD_LENGTH)}…` : field;

/**
 * The constraints that say what type a value must be. class-validator checks every constraint of a field, so a value
 * of the wrong type also failed the ranges it cannot be measured against: `?limit=abc` read "limit must not be greater
 * than 100; limit must not be less than 1; limit must be an integer number", two of them contradicting each other.
 * Where a type check failed, it is the field's only message: the ranges are said once the type is right.
 */
const TYPE_CHECKS = new Set(['isInt', 'isNumber', 'isString', 'isBoolean', 'isArray', 'isObject']);

/** A field's failed constraints' messages: its type's alone when that failed (TYPE_CHECKS), else all of them. */
function messagesOf(constraints: Record<string, string> = {}): string[] {
  const failed = Object.entries(constraints);
  const typeChecks = failed.filter(([name]) => TYPE_CHECKS.has(name));
  return (typeChecks.length ? typeChecks : failed).map(([, message]) => message);
}

function flatten(errors: ValidationError[], parent = ''): ErrorDetail[] {
  return errors.flatMap((error) => {
    const field = shortField(parent ? `${parent}.${error.property}` : error.property);
    const own = messagesOf(error.constraints).map((message) => ({
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
/** Body DTOs whose body may be left out altogether (`@OptionalBody()`): the handler gets `undefined`. */
const OPTIONAL_BODIES = new WeakSet<object>();

/**
 * The body may be absent (no body at all: `undefined` reaches the handler); when one is sent, it is validated as
 * always. Document it with `@ApiBody({ type, required: false })`.
 */
export function OptionalBody(): ClassDecorator {
  return (target) => {
    OPTIONAL_BODIES.add(target);
  };
}

class DtoValidationPipe extends ValidationPipe {
  /**
   * A body that is not a JSON object (an array, a string, a number, null) is refused as such, in one entry, before
   * class-transformer and class-validator see it: an array of 32,000 elements is not 32,000 unknown fields.
   */
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const dto = metadata.metatype && metadata.metatype !== Object && this.toValidate(metadata);
    if (
      metadata.type === 'body' &&
      value === undefined &&
      metadata.metatype &&
      OPTIONAL_BODIES.has(metadata.metatype)
    ) {
      return Promise.resolve(undefined);
    }
    if (metadata.type === 'body' && dto && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      throw NOT_AN_OBJECT();
    }
    return super.transform(value, metadata);
  }

  protected override transformPrimitive(value: unknown, metadata: ArgumentMetadata): unknown {
    return metadata.type === 'param' ? value : super.transformPrimitive(value, metadata);
  }
}

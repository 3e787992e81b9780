import { Injectable, PipeTransform, ArgumentMetadata } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Message ids are UUIDs (any letter case, kept in lower case): anything else is a 400, never a 500. */
@Injectable()
export class ParseMessageIdPipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    const name = metadata.data ?? 'id';
    if (typeof value !== 'string' || !UUID.test(value)) {
      throw ApiError.validation(`${name} must be a UUID.`, [{ field: name, message: `${name} must be a UUID` }]);
    }
    return value.toLowerCase();
  }
}

import { Injectable, PipeTransform, ArgumentMetadata } from '@nestjs/common';
import { isMessageId } from '@petstore/domain';
import { ApiError } from '../common/errors/api-error';

/** Message ids are UUIDs (any letter case, kept in lower case): anything else is a 400, never a 500. */
@Injectable()
export class ParseMessageIdPipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    const name = metadata.data ?? 'id';
    if (!isMessageId(value)) {
      throw ApiError.validation(`${name} must be a UUID.`, [{ field: name, message: `${name} must be a UUID` }]);
    }
    return value.toLowerCase();
  }
}

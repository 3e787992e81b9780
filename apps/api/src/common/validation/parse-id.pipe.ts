import { Injectable, PipeTransform, ArgumentMetadata } from '@nestjs/common';
import { ApiError } from '../errors/api-error';
import { isPositiveInt64 } from './int64';

/**
 * Path ids are positive int64 integers: anything else is a 400. Ids are issued by
 * sequences far below 2^53, so a valid int64 above that cannot exist: a 404.
 */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: ArgumentMetadata): number {
    const name = metadata.data ?? 'id';
    if (!isPositiveInt64(value)) {
      throw ApiError.validation(`${name} must be a positive 64-bit integer.`, [
        { field: name, message: `${name} must be a positive 64-bit integer` },
      ]);
    }
    const id = Number(value);
    if (!Number.isSafeInteger(id)) throw ApiError.notFound(`No resource has ${name} ${value}.`);
    return id;
  }
}

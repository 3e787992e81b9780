import type { ArgumentMetadata } from '@nestjs/common';
import { NewCategoryDto } from '../../resources/category.dto';
import { InventoryUpdateDto } from '../../resources/inventory.dto';
import { ApiError } from '../errors/api-error';
import { PageQueryDto } from '../pagination/page.query.dto';
import { createValidationPipe } from './validation.pipe';

/** What the pipe refuses `value` with, as a client reads it: the message and the details. */
async function refusal(value: unknown, metadata: ArgumentMetadata): Promise<{ message: string; details: unknown }> {
  try {
    await createValidationPipe().transform(value, metadata);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const { message, details } = error;
    return { message, details };
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

const query = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype });
const body = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype });

describe('validation messages: a value of the wrong type is told its type, not the ranges it cannot meet', () => {
  it.each([
    ['a word', 'abc'],
    ['an empty value', ''],
    ['a number in exponent form', '1e3'],
    ['a fraction', '2.5'],
    ['the parameter twice', ['1', '2']],
  ])('?limit= %s: "must be an integer", not "greater than 100" and "less than 1" too', async (_, limit) => {
    expect(await refusal({ limit }, query(PageQueryDto))).toEqual({
      message: 'The request is invalid: limit must be an integer number.',
      details: [{ field: 'limit', message: 'limit must be an integer number' }],
    });
  });

  it('still says the range once the type is right', async () => {
    expect(await refusal({ limit: '500' }, query(PageQueryDto))).toEqual({
      message: 'The request is invalid: limit must not be greater than 100.',
      details: [{ field: 'limit', message: 'limit must not be greater than 100' }],
    });
  });

  it('a body field of the wrong type: one message each, whatever its other constraints', async () => {
    expect(await refusal({ quantity: 'five' }, body(InventoryUpdateDto))).toEqual({
      message: 'The request is invalid: quantity must be an integer number.',
      details: [{ field: 'quantity', message: 'quantity must be an integer number' }],
    });
    expect((await refusal({ name: 123, description: ['x'] }, body(NewCategoryDto))).details).toEqual([
      { field: 'name', message: 'name must be a string' },
      { field: 'description', message: 'description must be a string' },
    ]);
  });

  it('tells a value of the right type every constraint it fails, one field after another', async () => {
    expect((await refusal({ name: '', description: 'x'.repeat(1001) }, body(NewCategoryDto))).details).toEqual([
      { field: 'name', message: 'name must be longer than or equal to 1 characters' },
      { field: 'description', message: 'description must be shorter than or equal to 1000 characters' },
    ]);
    expect((await refusal({ quantity: -1 }, body(InventoryUpdateDto))).details).toEqual([
      { field: 'quantity', message: 'quantity must not be less than 0' },
    ]);
  });

  it('still names unknown fields beside a wrong type', async () => {
    expect((await refusal({ quantity: true, extra: 1 }, body(InventoryUpdateDto))).details).toEqual([
      { field: 'extra', message: 'extra is not a known field' },
      { field: 'quantity', message: 'quantity must be an integer number' },
    ]);
  });
});

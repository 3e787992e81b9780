import { Category } from '../category/category';
import { newId } from './identity';

describe('newId', () => {
  it('takes a positive safe integer', () => {
    expect(newId(1)).toBe(1);
    expect(newId(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1])('refuses %p: a new aggregate has its id', (id) => {
    expect(() => newId(id)).toThrow(RangeError);
  });

  it('is what the factories check: no aggregate is made with the old 0 placeholder', () => {
    expect(() => Category.create({ id: 0, name: 'Dogs' })).toThrow(RangeError);
  });
});

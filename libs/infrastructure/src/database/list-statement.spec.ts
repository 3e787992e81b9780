import { listStatement } from './list-statement';

describe('listStatement: one statement text per combination of filters, each parameter numbered in turn', () => {
  const select = 'SELECT id FROM things';
  const after = (p: string) => `id > ${p}`;
  const kind = (p: string) => `kind = ANY(${p})`;
  const order = (limit: string) => `ORDER BY id LIMIT ${limit}`;

  it('leaves out the conditions without a value, and numbers the limit after the others', () => {
    expect(
      listStatement({
        select,
        conditions: [
          [undefined, after],
          [undefined, kind],
        ],
        order,
        limit: 21,
      }),
    ).toEqual({
      text: 'SELECT id FROM things ORDER BY id LIMIT $1',
      params: [21],
    });
    expect(
      listStatement({
        select,
        conditions: [
          [undefined, after],
          [['a'], kind],
        ],
        order,
        limit: 21,
      }),
    ).toEqual({
      text: 'SELECT id FROM things WHERE kind = ANY($1) ORDER BY id LIMIT $2',
      params: [['a'], 21],
    });
  });

  it('keeps a condition whose value is falsy but given (0, false, an empty list)', () => {
    expect(
      listStatement({
        select,
        conditions: [
          [0, after],
          [false, (p) => `done = ${p}`],
        ],
        order,
        limit: 5,
      }),
    ).toEqual({
      text: 'SELECT id FROM things WHERE id > $1 AND done = $2 ORDER BY id LIMIT $3',
      params: [0, false, 5],
    });
  });

  it('puts what the list always filters on first, its parameters from $1', () => {
    expect(
      listStatement({
        select,
        always: { sql: 'owner_id = $1 AND gone IS NULL', values: [7] },
        conditions: [[10, after]],
        order,
        limit: 3,
      }),
    ).toEqual({
      text: 'SELECT id FROM things WHERE owner_id = $1 AND gone IS NULL AND id > $2 ORDER BY id LIMIT $3',
      params: [7, 10, 3],
    });
    expect(
      listStatement({ select, always: { sql: 'owner_id = $1', values: [7] }, conditions: [], order, limit: 3 }),
    ).toEqual({ text: 'SELECT id FROM things WHERE owner_id = $1 ORDER BY id LIMIT $2', params: [7, 3] });
  });
});

import { pageFromRows } from './page';

describe('pageFromRows', () => {
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i + 1 }));

  it('continues after the last item when the extra row came back', () => {
    expect(pageFromRows(rows(4), 3, (r) => r.id)).toEqual({ items: rows(3), nextAfterId: 3 });
  });

  it('has no next page when no extra row came back', () => {
    expect(pageFromRows(rows(3), 3, (r) => r.id)).toEqual({ items: rows(3), nextAfterId: null });
    expect(pageFromRows([], 3, (r: { id: number }) => r.id)).toEqual({ items: [], nextAfterId: null });
  });
});

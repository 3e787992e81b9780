import { anAccount } from '../../testing';
import { visibleTo } from './visible-to';

describe('visibleTo: not yours is not found', () => {
  const notFound = () => new Error('not found');
  const owner = anAccount().withId(1).build();
  const other = anAccount().withId(2).build();
  const admin = anAccount().withId(3).admin().build();
  const thing = { ownerId: 1 };

  it("gives the owner, an administrator and the service itself the resource; another account's is not found", () => {
    expect(visibleTo(thing, owner, notFound)).toBe(thing);
    expect(visibleTo(thing, admin, notFound)).toBe(thing);
    expect(visibleTo(thing, undefined, notFound)).toBe(thing);
    expect(() => visibleTo(thing, other, notFound)).toThrow('not found');
    expect(() => visibleTo(null, owner, notFound)).toThrow('not found');
  });
});

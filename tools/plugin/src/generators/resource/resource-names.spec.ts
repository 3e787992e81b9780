import { pluralOf, resourceNames } from './generator';

describe('the names of a generated resource', () => {
  it.each([
    ['shelter', 'shelters'],
    ['pet-toy', 'pet-toys'],
    ['box', 'boxes'],
    ['leash', 'leashes'],
    ['category', 'categories'],
    ['day', 'days'],
  ])('pluralises %s as %s', (singular, plural) => {
    expect(pluralOf(singular)).toBe(plural);
  });

  it('derives every spelling from a kebab-case or camelCase name', () => {
    const expected = {
      fileName: 'pet-toy',
      className: 'PetToy',
      propertyName: 'petToy',
      constantName: 'PET_TOY',
      snakeName: 'pet_toy',
      title: 'pet toy',
      pluralFileName: 'pet-toys',
      pluralClassName: 'PetToys',
      pluralSnakeName: 'pet_toys',
      pluralTitle: 'pet toys',
    };
    expect(resourceNames('pet-toy')).toEqual(expected);
    expect(resourceNames('petToy')).toEqual(expected);
  });

  it('takes an irregular plural as given', () => {
    expect(resourceNames('mouse', 'mice')).toMatchObject({ pluralFileName: 'mice', pluralClassName: 'Mice' });
  });
});

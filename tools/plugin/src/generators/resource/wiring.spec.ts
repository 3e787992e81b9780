import { Tree } from '@nx/devkit';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import { addExport, addImport, addObjectProperty, addUnionMember, appendToArray } from './wiring';

describe('wiring a resource into shared files', () => {
  let tree: Tree;
  const FILE = 'list.ts';
  const write = (text: string) => tree.write(FILE, text);
  const text = () => tree.read(FILE, 'utf-8');

  beforeEach(() => {
    tree = createTreeWithEmptyWorkspace();
  });

  it('adds an import after the last one, once', () => {
    write(`import { A } from './a';\nimport { B } from './b';\n\nexport const X = [A, B];\n`);
    addImport(tree, FILE, 'C', './c');
    addImport(tree, FILE, 'C', './c');
    expect(text()).toBe(
      `import { A } from './a';\nimport { B } from './b';\nimport { C } from './c';\n\nexport const X = [A, B];\n`,
    );
  });

  it('appends an export, once', () => {
    write(`export * from './a';`);
    addExport(tree, FILE, './b');
    addExport(tree, FILE, './b');
    expect(text()).toBe(`export * from './a';\nexport * from './b';\n`);
  });

  it('keeps a one-per-line array one per line, with its trailing comma', () => {
    write(`export const M = [\n  A,\n  B,\n];\n`);
    appendToArray(tree, FILE, { variable: 'M' }, 'C');
    appendToArray(tree, FILE, { variable: 'M' }, 'C');
    expect(text()).toBe(`export const M = [\n  A,\n  B,\n  C,\n];\n`);
  });

  it('extends a short one-line array on its line, and breaks a line that would pass 120 characters', () => {
    write(`const X = [A, B];\nconst Y = [${'Long'.repeat(27)}];\n`);
    appendToArray(tree, FILE, { variable: 'X' }, 'C');
    appendToArray(tree, FILE, { variable: 'Y' }, 'C');
    expect(text()).toBe(`const X = [A, B, C];\nconst Y = [${'Long'.repeat(27)},\n  C];\n`);
  });

  it('finds the property array that has elements (the dynamic module, not the empty decorator)', () => {
    write(
      `@Module({ imports: [] })\nclass M {\n  f() {\n    return { imports: [\n` +
        `      A, B,\n      C,\n    ] };\n  }\n}\n`,
    );
    appendToArray(tree, FILE, { property: 'imports' }, 'D');
    expect(text()).toContain(`      C,\n      D,\n    ] };`);
    expect(text()).toContain(`@Module({ imports: [] })`);
  });

  it('says which array it could not find', () => {
    write(`export const M = 1;\n`);
    expect(() => appendToArray(tree, FILE, { variable: 'MIGRATIONS' }, 'C')).toThrow(/MIGRATIONS/);
  });

  it('adds a member at the end of a union, once, keeping the last member and the semicolon in place', () => {
    write(`export type Kind =\n  | 'a' // first\n  // second\n  | 'b';\n`);
    addUnionMember(tree, FILE, 'Kind', 'c');
    addUnionMember(tree, FILE, 'Kind', 'c');
    expect(text()).toBe(`export type Kind =\n  | 'a' // first\n  // second\n  | 'b'\n  | 'c';\n`);
  });

  it('adds a property at the end of an object literal, once, with or without a trailing comma', () => {
    write(`const T: R = {\n  a: { s: 1 },\n};\nconst U = { a: 1 };\n`);
    addObjectProperty(tree, FILE, 'T', 'b', 'b: { s: 2 }');
    addObjectProperty(tree, FILE, 'T', 'b', 'b: { s: 2 }');
    addObjectProperty(tree, FILE, 'U', 'b', 'b: 2');
    expect(text()).toBe(`const T: R = {\n  a: { s: 1 },\n  b: { s: 2 },\n};\nconst U = { a: 1,\nb: 2 };\n`);
  });
});

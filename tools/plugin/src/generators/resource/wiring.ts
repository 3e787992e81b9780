import type { Tree } from '@nx/devkit';
import * as ts from 'typescript';

/**
 * Small edits of the shared TypeScript files a new resource is wired into (indexes, the
 * migration lists, the assembly). They find their place with the TypeScript parser, not a regular
 * expression, and insert one line in the file's own layout, leaving the rest of it byte for byte.
 */

const MAX_LINE = 120;

function parse(tree: Tree, file: string): ts.SourceFile {
  const text = tree.read(file, 'utf-8');
  if (text === null) throw new Error(`${file} does not exist.`);
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
}

function insertAt(tree: Tree, source: ts.SourceFile, position: number, text: string): void {
  const original = source.getFullText();
  tree.write(source.fileName, original.slice(0, position) + text + original.slice(position));
}

function lineEnd(source: ts.SourceFile, position: number): number {
  const { line } = source.getLineAndCharacterOfPosition(position);
  const starts = source.getLineStarts();
  return line + 1 < starts.length ? starts[line + 1] - 1 : source.getFullText().length;
}

function indentOf(source: ts.SourceFile, position: number): string {
  const { line } = source.getLineAndCharacterOfPosition(position);
  const start = source.getLineStarts()[line];
  return /^[ \t]*/.exec(source.getFullText().slice(start))?.[0] ?? '';
}

/** Appends `export * from '<from>';` unless the file has it. */
export function addExport(tree: Tree, file: string, from: string): void {
  const source = parse(tree, file);
  const exists = source.statements.some(
    (s) => ts.isExportDeclaration(s) && s.moduleSpecifier && (s.moduleSpecifier as ts.StringLiteral).text === from,
  );
  if (exists) return;
  const text = source.getFullText();
  const separator = text.length === 0 || text.endsWith('\n') ? '' : '\n';
  tree.write(file, `${text}${separator}export * from '${from}';\n`);
}

/** Adds `import { <name> } from '<from>';` after the file's last import, unless it has it. */
export function addImport(tree: Tree, file: string, name: string, from: string): void {
  const source = parse(tree, file);
  const imports = source.statements.filter(ts.isImportDeclaration);
  if (imports.some((i) => (i.moduleSpecifier as ts.StringLiteral).text === from)) return;
  const line = `import { ${name} } from '${from}';`;
  const last = imports.at(-1);
  if (last) insertAt(tree, source, lineEnd(source, last.getEnd()), `\n${line}`);
  else insertAt(tree, source, 0, `${line}\n`);
}

export type ArrayLocation =
  /** The array initialising `const <variable> = [...]`. */
  | { variable: string }
  /** The array of the first property `<property>: [...]` that has elements. */
  | { property: string };

function findArray(source: ts.SourceFile, where: ArrayLocation): ts.ArrayLiteralExpression | undefined {
  let found: ts.ArrayLiteralExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (
      'variable' in where &&
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.name.text === where.variable &&
      node.initializer &&
      ts.isArrayLiteralExpression(node.initializer)
    ) {
      found = node.initializer;
    } else if (
      'property' in where &&
      ts.isPropertyAssignment(node) &&
      ts.isIdentifier(node.name) &&
      node.name.text === where.property &&
      ts.isArrayLiteralExpression(node.initializer) &&
      node.initializer.elements.length > 0
    ) {
      found = node.initializer;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Appends `element` to an array literal, after its last element: on a line of its own when the array has
 * its last elements on separate lines or the line would pass 120 characters, indented like the last element
 * (or two spaces deeper than a last element on the line of the `[`); else on the same line.
 */
export function appendToArray(tree: Tree, file: string, where: ArrayLocation, element: string): void {
  const source = parse(tree, file);
  const array = findArray(source, where);
  if (!array) throw new Error(`${file}: no array ${JSON.stringify(where)} to add ${element} to.`);
  if (array.elements.some((e) => e.getText(source) === element)) return;
  const last = array.elements.at(-1);
  if (!last) {
    insertAt(tree, source, array.getStart(source) + 1, element);
    return;
  }
  // After the last element, and after its trailing comma if it has one.
  const afterLast = array.elements.hasTrailingComma ? array.elements.end : last.getEnd();
  const lineText = source
    .getFullText()
    .slice(source.getLineStarts()[source.getLineAndCharacterOfPosition(afterLast).line], lineEnd(source, afterLast));
  const comma = array.elements.hasTrailingComma ? '' : ',';
  const trailing = array.elements.hasTrailingComma ? ',' : '';
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line;
  const previous = array.elements.at(-2);
  const onePerLine = previous !== undefined && lineOf(previous) !== lineOf(last);
  if (!onePerLine && lineText.length + element.length + 2 <= MAX_LINE) {
    insertAt(tree, source, afterLast, `${comma} ${element}${trailing}`);
    return;
  }
  const sharesLineWithArray = lineOf(last) === lineOf(array);
  const indent = sharesLineWithArray
    ? indentOf(source, array.getStart(source)) + '  '
    : indentOf(source, last.getStart(source));
  insertAt(tree, source, afterLast, `${comma}\n${indent}${element}${trailing}`);
}

/** Adds `| '<member>'` as the last member of the string-literal union `type <typeName> = …`, unless it has it. */
export function addUnionMember(tree: Tree, file: string, typeName: string, member: string): void {
  const source = parse(tree, file);
  const alias = source.statements.find(
    (s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === typeName,
  );
  if (!alias || !ts.isUnionTypeNode(alias.type)) throw new Error(`${file}: no union type ${typeName} to add to.`);
  const literal = `'${member}'`;
  if (alias.type.types.some((t) => t.getText(source) === literal)) return;
  const last = alias.type.types[alias.type.types.length - 1];
  insertAt(tree, source, last.getEnd(), `\n${indentOf(source, last.getStart(source))}| ${literal}`);
}

/** Adds `<property>` (e.g. `key: { … }`) as the last property of the object literal `const <variable> = {…}`. */
export function addObjectProperty(tree: Tree, file: string, variable: string, name: string, property: string): void {
  const source = parse(tree, file);
  let found: ts.ObjectLiteralExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.name.text === variable &&
      node.initializer &&
      ts.isObjectLiteralExpression(node.initializer)
    ) {
      found = node.initializer;
    }
    if (!found) ts.forEachChild(node, visit);
  };
  visit(source);
  if (!found) throw new Error(`${file}: no object ${variable} to add ${name} to.`);
  if (found.properties.some((p) => p.name && p.name.getText(source) === name)) return;
  const last = found.properties[found.properties.length - 1];
  if (!last) throw new Error(`${file}: ${variable} is empty; add ${name} by hand.`);
  const afterLast = found.properties.hasTrailingComma ? found.properties.end : last.getEnd();
  const comma = found.properties.hasTrailingComma ? '' : ',';
  const trailing = found.properties.hasTrailingComma ? ',' : '';
  insertAt(tree, source, afterLast, `${comma}\n${indentOf(source, last.getStart(source))}${property}${trailing}`);
}

import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as ts from 'typescript';

const SRC = resolve(__dirname, '..');
const ROOT = resolve(SRC, '../../..');

function productionFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return productionFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * The Nest modules a file makes global: a class decorated `@Global()`, or a dynamic module
 * `{ module: X, global: true }`. An object with `global: true` but no `module` is no Nest module (@fastify/compress
 * takes such an option).
 */
function globalModulesOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) && node.name) {
      const global = ts.getDecorators(node)?.some((decorator) => {
        const call = decorator.expression;
        return ts.isCallExpression(call) && ts.isIdentifier(call.expression) && call.expression.text === 'Global';
      });
      if (global) found.push(node.name.text);
    }
    if (ts.isObjectLiteralExpression(node)) {
      const property = (name: string) =>
        node.properties.find(
          (p): p is ts.PropertyAssignment =>
            ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === name,
        )?.initializer;
      const module = property('module');
      if (module && property('global')?.kind === ts.SyntaxKind.TrueKeyword) found.push(module.getText(source));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * A global module is resolved everywhere without an import, so it hides what a module depends on: only the
 * process-wide ones are global, and docs/architecture.md names them all ("Global modules:" followed by their names
 * in backticks). A module made global, or no longer, without that line changing fails here.
 */
describe('the global modules', () => {
  const inCode = productionFiles(SRC).flatMap(globalModulesOf).sort();
  const line = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8')
    .split('\n')
    .find((text) => text.startsWith('Global modules:'));
  const documented = [...(line ?? '').matchAll(/`(\w+)`/g)].map((match) => match[1]).sort();

  it('are found in the code (the walk itself)', () => {
    expect(inCode).toEqual(expect.arrayContaining(['ConfigModule', 'DatabaseModule']));
    expect(globalModulesOf(join(SRC, 'common/http/http-semantics.hooks.ts'))).toEqual([]);
  });

  it('are those docs/architecture.md names', () => {
    expect(documented).toEqual(inCode);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as ts from 'typescript';

const SRC = resolve(__dirname, '..');

/** The production files of apps/api/src (a spec is imported by nothing, so it closes no cycle). */
function productionFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return productionFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Each file's relative imports (static, `export … from`, dynamic), as paths under apps/api/src. */
function importsOf(file: string): string[] {
  // The compiler's own pre-processor finds every import form; a regex would miss some or read comments.
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => relative(SRC, resolve(dirname(file), name)))
    .filter((path) => !path.startsWith('..'));
}

type Graph = Map<string, Set<string>>;

/** The graph between folders: `folderOf` names a file's folder (undefined: not a node of this graph). */
function folderGraph(folderOf: (path: string) => string | undefined): Graph {
  const graph: Graph = new Map();
  for (const file of productionFiles(SRC)) {
    const from = folderOf(relative(SRC, file));
    if (!from) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    for (const target of importsOf(file)) {
      const to = folderOf(target);
      if (to && to !== from) graph.get(from)?.add(to);
    }
  }
  return graph;
}

/** The strongly connected components of more than one node (Tarjan): each is a set of folders in a cycle. */
function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (stack.includes(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member) component.push(member);
      } while (member && member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const parts = (path: string) => path.split(sep);
/** A top-level folder of apps/api/src (common/ as one); the files beside them (main.ts, …) are one node. */
const topLevel = (path: string) => (parts(path).length > 1 ? parts(path)[0] : '(root files)');
/** A folder of common/; files elsewhere are no node. */
const commonFolder = (path: string) => (parts(path)[0] === 'common' ? parts(path)[1] : undefined);

/**
 * The folders of apps/api/src, and those of its common/, import one another without a cycle: each folder can be read,
 * tested and moved with what lies below it. eslint.config.mjs ("Folder direction") refuses an import against the
 * ranks; this walks the real imports, so that a rank table that allowed a cycle would fail here too.
 */
describe('the folders of apps/api/src', () => {
  it('find a cycle when there is one (the walk itself)', () => {
    const graph: Graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
    expect(cycles(new Map([['a', new Set(['b'])]]))).toEqual([]);
  });

  it('import one another without a cycle', () => {
    const graph = folderGraph(topLevel);
    expect([...(graph.get('assembly') ?? [])]).toEqual(expect.arrayContaining(['common', 'metrics', 'catalogue']));
    expect(cycles(graph)).toEqual([]);
  });

  it('of common/ import one another without a cycle, and http-kit imports nothing of the app', () => {
    const graph = folderGraph(commonFolder);
    expect([...(graph.get('errors') ?? [])]).toContain('http-kit');
    expect(cycles(graph)).toEqual([]);
    const leaf = productionFiles(join(SRC, 'common/http-kit')).flatMap(importsOf);
    expect(leaf.filter((path) => !path.startsWith(`common${sep}http-kit${sep}`))).toEqual([]);
  });
});

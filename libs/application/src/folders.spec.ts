import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as ts from 'typescript';

const SRC = __dirname;

type Graph = Map<string, Set<string>>;

/** The production files under `dir` (a spec is imported by nothing, so it closes no cycle). */
function productionFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return productionFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The folder of libs/application/src a path lies in; the files beside the folders (index.ts) are no node. */
const folderOf = (path: string): string | undefined => (path.includes(sep) ? path.split(sep)[0] : undefined);

/** Which folder imports which, from the relative imports of every production file (the compiler's pre-processor). */
function folderGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of productionFiles(SRC)) {
    const from = folderOf(relative(SRC, file));
    if (!from) continue;
    const targets = graph.get(from) ?? new Set<string>();
    graph.set(from, targets);
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = folderOf(relative(SRC, resolve(dirname(file), fileName)));
      if (to && to !== from && !to.startsWith('..')) targets.add(to);
    }
  }
  return graph;
}

/** A cycle of folders, `[a, b, …, a]`, if the graph has one (depth first: the first edge back to the path). */
function cycleIn(graph: Graph): string[] | undefined {
  const done = new Set<string>();
  const visit = (node: string, path: string[]): string[] | undefined => {
    if (path.includes(node)) return [...path.slice(path.indexOf(node)), node];
    if (done.has(node)) return undefined;
    for (const to of graph.get(node) ?? []) {
      const found = visit(to, [...path, node]);
      if (found) return found;
    }
    done.add(node);
    return undefined;
  };
  for (const node of graph.keys()) {
    const found = visit(node, []);
    if (found) return found;
  }
  return undefined;
}

/**
 * The folders of libs/application/src import one another without a cycle, so that they stand in floors, each on
 * those below it: common/ at the bottom (it imports no other folder), the ports on it, and the slices above; ordering
 * (order/) on the catalogue (stock/), never the reverse (docs/architecture.md, "Slices and their directions"). Lint
 * refuses a slice's import of a slice it does not declare; this walks the real imports, folders that are no slice's
 * included.
 */
describe('the folders of libs/application/src', () => {
  it('find a cycle when there is one (the walk itself)', () => {
    const graph: Graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(cycleIn(graph)).toEqual(['a', 'b', 'c', 'a']);
    expect(cycleIn(new Map([['a', new Set(['b'])]]))).toBeUndefined();
  });

  it('import one another without a cycle; common/ imports no other folder', () => {
    const graph = folderGraph();
    expect([...(graph.get('order') ?? [])]).toEqual(expect.arrayContaining(['stock', 'account', 'events']));
    expect(cycleIn(graph)).toBeUndefined();
    expect([...(graph.get('common') ?? [])]).toEqual([]);
  });
});

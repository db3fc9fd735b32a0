// Import circles among the repository's own .ts files, found by reading their relative imports
// (static, `export ... from`, `import type`, dynamic `import()` and `typeof import()` alike: a
// type-only circle still ties two modules' meanings together). TypeScript's own scanner reads
// the imports (ts.preProcessFile: comments and strings are not imports); the rest is pure.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

/** Each file's relative imports, resolved to files of `sources` (paths as given, '/'-separated). */
export function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of sources) {
    const to = new Set<string>();
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith('./') && !fileName.startsWith('../')) continue;
      const target = resolveImport(file, fileName, sources);
      if (target !== undefined) to.add(target);
    }
    graph.set(file, [...to].sort());
  }
  return graph;
}

/** `./x.js` from `dir/a.ts`: `dir/x.ts` (or `.tsx`, `.mts`, `x/index.ts`), when it is one of `sources`. */
function resolveImport(from: string, spec: string, sources: ReadonlyMap<string, string>): string | undefined {
  const base = normalize(join(dirname(from), spec)).replaceAll('\\', '/');
  const stem = base.replace(/\.(m?js|jsx)$/, '');
  const mts = base.endsWith('.mjs') ? [`${stem}.mts`] : [];
  return [base, `${stem}.ts`, `${stem}.tsx`, ...mts, `${base}/index.ts`].find((c) => sources.has(c));
}

/**
 * Every circle of `graph`, one per strongly connected part of more than one file (or a file that
 * imports itself), each as the files in import order with the first repeated at the end:
 * `['a.ts', 'b.ts', 'a.ts']`. None for a graph without circles.
 */
export function findCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  return stronglyConnected(graph)
    .filter((part) => part.length > 1 || (graph.get(part[0]!) ?? []).includes(part[0]!))
    .map((part) => circleIn(graph, new Set(part)))
    .sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Tarjan's strongly connected components, iteratively (no recursion limit on a long chain). */
function stronglyConnected(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const parts: string[][] = [];
  let next = 0;
  for (const root of [...graph.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const edges = graph.get(top.node) ?? [];
      if (top.edge < edges.length) {
        const to = edges[top.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) !== index.get(top.node)) continue;
      const part: string[] = [];
      let n: string;
      do {
        n = stack.pop()!;
        onStack.delete(n);
        part.push(n);
      } while (n !== top.node);
      parts.push(part.sort());
    }
  }
  return parts;
}

/** One shortest circle through the first file of `part` (breadth first, inside `part` only). */
function circleIn(graph: ReadonlyMap<string, readonly string[]>, part: ReadonlySet<string>): string[] {
  const start = [...part].sort()[0]!;
  const came = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const at = queue[i]!;
    for (const to of graph.get(at) ?? []) {
      if (!part.has(to)) continue;
      if (to === start) {
        const path = [at];
        while (path[0] !== start) path.unshift(came.get(path[0]!)!);
        return [...path, start];
      }
      if (!came.has(to)) {
        came.set(to, at);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

/** The .ts files under `dirs` of `root` (node_modules and dist skipped), keyed by their path from `root`. */
export function readSources(root: string, dirs: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'dist') walk(path);
      } else if (/\.(m?ts|tsx)$/.test(e.name) && !e.name.endsWith('.d.ts')) {
        out.set(relative(root, path).replaceAll('\\', '/'), readFileSync(path, 'utf8'));
      }
    }
  };
  for (const d of dirs) walk(join(root, d));
  return out;
}

/** The folder of a file (`helper/shell/bash/bash.ts`: `helper/shell/bash`); `.` for a file at the top. */
export const folderOf = (file: string): string => (file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '.');

/**
 * The graph between folders that `graph` (between files) draws: an arrow from a folder to each
 * other folder one of its own files imports (a folder's subfolders are folders of their own), with
 * the first import that makes it (`from.ts -> to.ts`) to show why.
 */
export function folderGraph(graph: ReadonlyMap<string, readonly string[]>): Map<string, Map<string, string>> {
  const folders = new Map<string, Map<string, string>>();
  for (const [file, targets] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
    const from = folderOf(file);
    const arrows = folders.get(from) ?? new Map<string, string>();
    folders.set(from, arrows);
    for (const target of targets) {
      const to = folderOf(target);
      if (to !== from && !arrows.has(to)) arrows.set(to, `${file} -> ${target}`);
    }
  }
  return folders;
}

/**
 * Every circle between folders (a folder that imports one that imports it back, directly or
 * through others): one per set of folders tied together, as a shortest circle through its first
 * folder with the import that makes each arrow, then every folder of the set when there are more:
 * `a -> b -> a (a/x.ts -> b/y.ts; b/y.ts -> a/z.ts)`, `... [tied: a, b, c]`.
 */
export function folderCircles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const folders = folderGraph(graph);
  const arrows = new Map([...folders].map(([f, to]) => [f, [...to.keys()].sort()]));
  const parts = stronglyConnected(arrows);
  return findCircles(arrows).map((circle) => {
    const why = circle.slice(1).map((to, i) => folders.get(circle[i]!)!.get(to)!);
    const tied = parts.find((p) => p.includes(circle[0]!))!;
    const more = tied.length > circle.length - 1 ? ` [tied: ${tied.join(', ')}]` : '';
    return `${circle.join(' -> ')} (${why.join('; ')})${more}`;
  });
}

/**
 * Each pair of folders that import each other directly, as `a <-> b (a/x.ts -> b/y.ts; b/y.ts ->
 * a/z.ts)`: the arrows back that tie the folders of a circle together.
 */
export function twoWayFolders(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const folders = folderGraph(graph);
  const out: string[] = [];
  for (const [a, to] of folders)
    for (const [b, why] of to) {
      const back = folders.get(b)?.get(a);
      if (back !== undefined && a < b) out.push(`${a} <-> ${b} (${why}; ${back})`);
    }
  return out.sort();
}

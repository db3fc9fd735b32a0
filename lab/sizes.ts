// The house's sizes (BRIEF: product files under 350 lines, functions around 60 lines at most):
// every function of a .ts file measured with TypeScript's own parser, from its first token to its
// closing brace (the comment above it not counted, a nested function counted in its parent and
// on its own), and every function of a .c or .h file from its column-0 signature to its column-0 `}`
// (the native files' one layout). Pure, but for reading the files.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** One function over a limit: where it starts and how many lines it has. */
export interface LongFunction {
  file: string;
  name: string;
  line: number;
  lines: number;
}

const linesOf = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** The functions of one .ts file with more than `limit` lines, in source order. */
export function longTsFunctions(file: string, text: string, limit: number): LongFunction[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineAt = (pos: number): number => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const out: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const line = lineAt(node.getStart(sf));
      const lines = lineAt(node.getEnd()) - line + 1;
      if (lines > limit) out.push({ file, name: functionName(node, sf), line, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

// A function's own name, or the name it is bound to (`const f = () =>`, `{ f: () => }`), or
// "callback in" the nearest named function around it.
function functionName(node: ts.Node, sf: ts.SourceFile): string {
  const own = (n: ts.Node): string | undefined => {
    const named = n as { name?: ts.Node };
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isAccessor(n)) && named.name !== undefined)
      return named.name.getText(sf);
    if (ts.isConstructorDeclaration(n)) return 'constructor';
    if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && n.name !== undefined) return n.name.getText(sf);
    const p = n.parent;
    if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && p !== undefined) {
      if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p)) && p.initializer === n) return p.name.getText(sf);
    }
    return undefined;
  };
  const name = own(node);
  if (name !== undefined) return name;
  for (let p = node.parent; p !== undefined; p = p.parent) {
    const outer = ts.isFunctionLike(p) ? own(p) : undefined;
    if (outer !== undefined) return `callback in ${outer}`;
  }
  return 'callback';
}

// A C function definition's first line: at column 0, not a preprocessor line, a `(` and ending `{`.
const C_SIGNATURE = /^[A-Za-z_][^#;=]*\([^;]*\)\s*(__attribute__\(\(.*\)\)\s*)?\{\s*$/;

/** The functions of one .c (or .h) file with more than `limit` lines, in source order. */
export function longCFunctions(file: string, text: string, limit: number): LongFunction[] {
  const rows = text.split('\n');
  const out: LongFunction[] = [];
  for (let i = 0; i < rows.length; i++) {
    if (!C_SIGNATURE.test(rows[i]!)) continue;
    const end = rows.findIndex((r, j) => j > i && r.startsWith('}'));
    if (end < 0) break;
    const lines = end - i + 1;
    const name = /([A-Za-z_]\w*)\s*\(/.exec(rows[i]!)?.[1] ?? '?';
    if (lines > limit) out.push({ file, name, line: i + 1, lines });
    i = end;
  }
  return out;
}

/** Every .ts, .c and .h file under `dirs` of `root`, '/'-separated paths relative to it, sorted. */
export function productFiles(root: string, dirs: readonly string[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const dir of dirs) {
    for (const f of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).sort()) {
      if (!/\.(ts|c|h)$/.test(f)) continue;
      const path = relative(root, join(root, dir, f)).replaceAll('\\', '/');
      files.set(path, readFileSync(join(root, path), 'utf8'));
    }
  }
  return files;
}

/** The files of `files` over `limit` lines, as "path (N lines)". */
export function longFiles(files: ReadonlyMap<string, string>, limit: number): string[] {
  return [...files]
    .map(([path, text]) => ({ path, n: linesOf(text) }))
    .filter(({ n }) => n > limit)
    .map(({ path, n }) => `${path} (${n} lines)`);
}

/** The functions of `files` over `limit` lines, as "path:line name (N lines)". */
export function longFunctions(files: ReadonlyMap<string, string>, limit: number): string[] {
  return [...files]
    .flatMap(([path, text]) =>
      path.endsWith('.ts')
        ? longTsFunctions(path, text, limit)
        : /\.[ch]$/.test(path)
          ? longCFunctions(path, text, limit)
          : [],
    )
    .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
}

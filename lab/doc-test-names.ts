// The tests a page names for its claims (SECURITY.md's `file › "test name"`), checked against the
// test tree: every test path it names exists, and every title it quotes is an it/test/describe
// title of the file it names (or, where it names none, of some test file). TypeScript's parser
// reads the titles (a template's or `it.each`'s holes match anything); pure, but for treeTitles,
// which reads the test files.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';
import { FENCED } from './doc-links.js';

/** A title as written: literal parts, and holes (`${x}`, `%s`, `$name` of an `each`) between them. */
export type TitlePattern = readonly (string | null)[];

/** A quoted phrase of a page and the test files it names at that point (undefined: none named yet). */
export interface QuotedName {
  readonly text: string;
  readonly line: number;
  readonly files: readonly string[] | undefined;
}

const TEST_CALLS = new Set(['it', 'test', 'describe']);
const MODIFIERS = new Set(['each', 'for', 'skipIf', 'runIf']);

/** The root name and whether an `each`/`for` table feeds the call `callee(...)`. */
function calleeRoot(callee: ts.Expression): { root: string | undefined; each: boolean } {
  let each = false;
  let e = callee;
  for (;;) {
    if (ts.isCallExpression(e)) e = e.expression;
    else if (ts.isPropertyAccessExpression(e)) {
      if (e.name.text === 'each' || e.name.text === 'for') each = true;
      e = e.expression;
    } else return { root: ts.isIdentifier(e) ? e.text : undefined, each };
  }
}

/** A title argument as literal parts and holes (null) between them. */
function patternOf(arg: ts.Expression): TitlePattern {
  if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) return [arg.text];
  if (ts.isTemplateExpression(arg)) return [arg.head.text, ...arg.templateSpans.flatMap((s) => [null, s.literal.text])];
  if (ts.isParenthesizedExpression(arg)) return patternOf(arg.expression);
  if (ts.isBinaryExpression(arg) && arg.operatorToken.kind === ts.SyntaxKind.PlusToken)
    return [...patternOf(arg.left), ...patternOf(arg.right)];
  return [null];
}

/** An `each` title's placeholders (`%s`, `%i`, `$name`...) are holes too. */
function eachHoles(p: TitlePattern): TitlePattern {
  return p.flatMap((part) =>
    part === null ? [null] : part.split(/(%[sdifjo#]|\$[A-Za-z_$][\w.]*)/).map((s, i) => (i % 2 ? null : s)),
  );
}

/** The titles of a test file's it/test/describe calls (with `.each`, `.skipIf`, `.skip`... alike). */
export function testTitles(source: string): TitlePattern[] {
  const out: TitlePattern[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const callee = node.expression;
      const modifier = ts.isPropertyAccessExpression(callee) && MODIFIERS.has(callee.name.text);
      const { root, each } = calleeRoot(callee);
      if (!modifier && root !== undefined && TEST_CALLS.has(root)) {
        const p = each ? eachHoles(patternOf(node.arguments[0]!)) : patternOf(node.arguments[0]!);
        if (p.some((part) => part !== null && part.trim() !== '')) out.push(p);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('t.ts', source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return out;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A typographic apostrophe is the plain one: a page and a title may write either. */
const plain = (s: string): string => s.replace(/\u2019/g, "'");

/**
 * Whether a quoted `name` is `title`: the whole of it (apostrophes typographic or plain), a hole
 * matching any text, and `…` in the name standing for words left out.
 */
export function namesTitle(name: string, title: TitlePattern): boolean {
  const n = plain(name);
  const t = title.map((p) => (p === null ? null : plain(p)));
  if (n.includes('…')) {
    const written = t.map((p) => p ?? '\u0000').join('');
    return new RegExp(`^${n.split('…').map(escapeRe).join('[\\s\\S]*')}$`).test(written);
  }
  return new RegExp(`^${t.map((p) => (p === null ? '[\\s\\S]+?' : escapeRe(p))).join('')}$`).test(n);
}

/** The page without fenced code blocks, each line kept (blank) so that line numbers stay true. */
function withoutFences(markdown: string): string {
  return markdown.replace(FENCED, (block) => block.replace(/[^\n]/g, ''));
}

/** A piece of a page: a test path, a legend letter (`(E)`), a letter naming files (`E ›`), a quote, a heading. */
interface Token {
  readonly kind: 'path' | 'legend' | 'letter' | 'quote' | 'heading';
  readonly value: string;
  readonly line: number;
  /** The text since the previous token (code spans that are not paths included). */
  readonly gap: string;
}

/** A test path in a code span: `test/x/y.test.ts`, a folder `test/x/`, or `y.test.ts` beside the last. */
const CODE_PATH = /^(?:test\/[\w./-]*|[\w.-]+\.test\.ts)$/;

/** How a page's pieces are read, tried in order at each point of its text. */
const READS: ReadonlyArray<{ kind: Token['kind'] | 'code'; re: RegExp }> = [
  { kind: 'heading', re: /(?<=^|\n)#{1,6}\s+/y },
  { kind: 'code', re: /(`+)([\s\S]*?)\1(?!`)/y },
  { kind: 'quote', re: /"((?:(`+)[\s\S]*?\2(?!`)|[^"`])*)"/y },
  { kind: 'legend', re: /\(([A-Z])\)/y },
  { kind: 'letter', re: /(?<!\w)([A-Z]) ›/y },
  { kind: 'path', re: /(?<![\w/.-])(test\/[\w./-]*[\w/]|[\w-]+\.test\.ts\b)/y },
];

/** The page's pieces in order; a bare `y.test.ts` resolved beside the last full path named before it. */
function tokens(markdown: string): Token[] {
  const text = withoutFences(markdown);
  const out: Token[] = [];
  let dir = 'test';
  let from = 0;
  for (let i = 0; i < text.length;) {
    const hit = READS.map(({ kind, re }) => ((re.lastIndex = i), { kind, m: re.exec(text) })).find((r) => r.m);
    if (!hit) {
      i++;
      continue;
    }
    const m = hit.m!;
    let kind = hit.kind;
    let value = (kind === 'code' ? m[2]!.trim() : m[1]) ?? '';
    if (kind === 'code' && CODE_PATH.test(value)) kind = 'path';
    if (kind === 'path') {
      if (!value.startsWith('test/')) value = posix.join(dir, value);
      else dir = value.endsWith('/') ? value.slice(0, -1) : posix.dirname(value);
    }
    if (kind !== 'code') {
      out.push({ kind, value, line: text.slice(0, i).split('\n').length, gap: text.slice(from, i) });
      from = i + m[0].length;
    }
    i += m[0].length;
  }
  return out;
}

/** The test paths a page names (in code spans or bare), with the line each stands on. */
export function testPaths(markdown: string): Array<{ path: string; line: number }> {
  return tokens(markdown)
    .filter((t) => t.kind === 'path')
    .map((t) => ({ path: t.value, line: t.line }));
}

/** What may join two paths named for the same quotes: `a` and `b`, `a`, `b`. */
const JOINS = /^\s*(?:,|and|, and)?\s*$/;

/**
 * Every quoted phrase of a page with the test files named for it: the last paths named before it
 * (several when joined by `and` or `,`), or the files of its letter (`E ›`, from a legend
 * `` `a.test.ts` and `b.test.ts` (E) ``); none after a heading until a path or letter is named.
 */
export function quotedNames(markdown: string): QuotedName[] {
  const out: QuotedName[] = [];
  const legends = new Map<string, string[]>();
  let files: string[] | undefined;
  let previous: Token | undefined;
  for (const t of tokens(markdown)) {
    const joined = previous?.kind === 'path' && JOINS.test(t.gap);
    if (t.kind === 'path') files = joined && files ? [...files, t.value] : [t.value];
    else if (t.kind === 'legend' && joined) legends.set(t.value, files!);
    else if (t.kind === 'letter') files = legends.get(t.value) ?? [`(no legend names ${t.value})`];
    else if (t.kind === 'heading') files = undefined;
    else if (t.kind === 'quote') out.push({ text: normalise(t.value), line: t.line, files });
    previous = t;
  }
  return out;
}

/** A quoted phrase as the page means it: one space for each line break and indent, Markdown escapes undone. */
function normalise(raw: string): string {
  return raw.replace(/\s+/g, ' ').replace(/\\([\\`*_{}[\]()#+\-.!|"])/g, '$1');
}

/** A page's headings and bold leads (`- **Lead.**`), which a quote may name as a section. */
function sections(markdown: string): string[] {
  const text = withoutFences(markdown);
  const heads = [...text.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => m[1]!);
  const leads = [...text.matchAll(/\*\*([^*]+?)\.?\*\*/g)].map((m) => m[1]!.replace(/\s+/g, ' '));
  return [...heads, ...leads];
}

/** Every `*.test.ts` under `root`'s test/ and its titles, by path from `root`. */
export function treeTitles(root: string, dir = 'test'): Map<string, TitlePattern[]> {
  const out = new Map<string, TitlePattern[]>();
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) for (const [f, t] of treeTitles(root, path)) out.set(f, t);
    else if (e.name.endsWith('.test.ts')) out.set(path, testTitles(readFileSync(join(root, path), 'utf8')));
  }
  return out;
}

/** The test paths `markdown` (the page `page`) names that do not exist, as `page:LINE: why`. */
export function missingTestPaths(page: string, markdown: string, exists: (path: string) => boolean): string[] {
  return testPaths(markdown)
    .filter(({ path }) => !exists(path))
    .map(({ path, line }) => `${page}:${line}: no such test file or folder: ${path}`);
}

/**
 * The quoted titles of `markdown` (the page `page`) that `titles` (the test tree's) does not bear
 * out, as `page:LINE: why`: no test of the files named for it has that title (or, where none is
 * named, no test at all), and no heading or bold lead of the page starts with it.
 */
export function staleTitles(page: string, markdown: string, titles: ReadonlyMap<string, TitlePattern[]>): string[] {
  const heads = sections(markdown);
  const stale: string[] = [];
  for (const q of quotedNames(markdown)) {
    const having = (fs: Iterable<string>): string[] =>
      [...fs].filter((f) => (titles.get(f) ?? []).some((t) => namesTitle(q.text, t)));
    if (q.files && having(q.files).length > 0) continue;
    const elsewhere = having(titles.keys());
    if (q.files === undefined && elsewhere.length > 0) continue;
    if (heads.some((h) => h.startsWith(q.text))) continue;
    const where = q.files ? ` in ${q.files.join(', ')}` : '';
    const found = elsewhere.length ? ` (it is in ${elsewhere.join(', ')})` : '';
    stale.push(`${page}:${q.line}: no test titled "${q.text}"${where}${found}`);
  }
  return stale;
}

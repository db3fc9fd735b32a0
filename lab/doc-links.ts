// The relative links of the repository's Markdown pages (README.md, docs/*.md, SECURITY.md,
// BENCHMARKS.md) and the anchors each page has, as GitHub forms them: a heading's text, lower
// case, without punctuation other than `-` and `_`, spaces as `-`, and `-1`, `-2`... for the
// second and later headings of the same text. Pure, but for reading the pages.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** GitHub's anchor for a heading's text (`## The CLI` -> `the-cli`). */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A fenced code block (``` or ~~~), whole: what a page says inside one is code, not prose. */
export const FENCED = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm;

/** The text outside fenced code blocks and inline code spans (links there are not links). */
function prose(markdown: string): string {
  return markdown.replace(FENCED, '').replace(/(`+)[\s\S]*?\1/g, '');
}

/** The anchors of a page's headings (ATX headings outside code blocks), duplicates numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = markdown.replace(FENCED, '');
  for (const m of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(m[1]!.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The targets of a page's inline links and images that are not URLs (`path`, `path#anchor`, `#anchor`). */
export function relativeLinks(markdown: string): string[] {
  const out: string[] = [];
  for (const m of prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    out.push(target);
  }
  return out;
}

/** Every link of `pages` (paths from `root`) that does not resolve, as `page: target (why)`. */
export function brokenLinks(root: string, pages: readonly string[]): string[] {
  const anchors = new Map<string, Set<string>>();
  const anchorsIn = (file: string): Set<string> => {
    if (!anchors.has(file)) anchors.set(file, anchorsOf(readFileSync(file, 'utf8')));
    return anchors.get(file)!;
  };
  const broken: string[] = [];
  for (const page of pages) {
    const file = join(root, page);
    for (const target of relativeLinks(readFileSync(file, 'utf8'))) {
      const [path = '', anchor] = target.split('#', 2);
      const to = path === '' ? file : join(dirname(file), decodeURIComponent(path));
      if (!existsSync(to)) broken.push(`${page}: ${target} (no such file: ${relative(root, to)})`);
      else if (anchor !== undefined && anchor !== '') {
        if (!to.endsWith('.md') || statSync(to).isDirectory()) continue;
        if (!anchorsIn(to).has(decodeURIComponent(anchor)))
          broken.push(`${page}: ${target} (no heading makes #${anchor} in ${relative(root, to)})`);
      }
    }
  }
  return broken;
}

/** The pages whose links are checked: README.md, SECURITY.md, BENCHMARKS.md and docs/*.md. */
export function docPages(root: string): string[] {
  const docs = existsSync(join(root, 'docs'))
    ? readdirSync(join(root, 'docs'))
        .filter((n) => n.endsWith('.md'))
        .map((n) => `docs/${n}`)
    : [];
  return ['README.md', 'SECURITY.md', 'BENCHMARKS.md', ...docs.sort()];
}

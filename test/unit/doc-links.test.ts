// Every relative link of README.md, docs/*.md, SECURITY.md and BENCHMARKS.md resolves: the file
// exists and, for `#anchor`, one of its headings makes that anchor as GitHub forms it. The front
// page reaches every docs/ file, and each of them links back to it. The tests the pages name are
// there: every test path exists, and every test SECURITY.md quotes for a claim
// (`file › "test name"`) is a test of that file.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, docPages, relativeLinks, slug } from '../../lab/doc-links.js';
import {
  missingTestPaths,
  namesTitle,
  quotedNames,
  staleTitles,
  testTitles,
  treeTitles,
} from '../../lab/doc-test-names.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('anchors and links as GitHub forms them', () => {
  it('makes a heading an anchor: lower case, punctuation dropped, spaces as hyphens', () => {
    expect(slug('The CLI')).toBe('the-cli');
    expect(slug('Approve each run (ask mode)')).toBe('approve-each-run-ask-mode');
    expect(slug('tmux_run (only with --enable-tool tmux_run)')).toBe('tmux_run-only-with---enable-tool-tmux_run');
    expect(slug("What's new: 2.0, é")).toBe('whats-new-20-é');
  });

  it('numbers a repeated heading, and reads no heading inside a code block', () => {
    const a = anchorsOf('# A\n## `code` B\n## A\n```sh\n# not a heading\n```\n');
    expect([...a]).toEqual(['a', 'code-b', 'a-1']);
  });

  it('takes relative links and images, not URLs, nor links inside code', () => {
    const md =
      '[x](docs/a.md#b) ![i](img.png) [u](https://e.org) [m](mailto:a@b) `[c](no.md)`\n```\n[d](no.md)\n```\n[s](#top "title")';
    expect(relativeLinks(md)).toEqual(['docs/a.md#b', 'img.png', '#top']);
  });
});

describe('the pages', () => {
  it('have no link that does not resolve', () => {
    const pages = docPages(ROOT);
    expect(pages.length).toBeGreaterThan(4);
    expect(brokenLinks(ROOT, pages)).toEqual([]);
  });

  it('the front page links every docs/ file, and each links back to it', () => {
    const front = relativeLinks(readFileSync(`${ROOT}/README.md`, 'utf8')).map((t) => t.split('#')[0]);
    for (const page of docPages(ROOT).filter((p) => p.startsWith('docs/'))) {
      expect(front, `README.md links ${page}`).toContain(page);
      const back = relativeLinks(readFileSync(`${ROOT}/${page}`, 'utf8')).map((t) => t.split('#')[0]);
      expect(back, `${page} links back to README.md`).toContain('../README.md');
    }
  });
});

describe('test names as a page quotes them', () => {
  it('reads the titles of it, test and describe calls: templates and each placeholders as holes', () => {
    const source = [
      "describe('a suite', () => {",
      "  it('plain', () => {});",
      '  it(`shell ${c.shell} runs`, () => {});',
      "  it.each(['a', 'b'])('with %s kept', () => {});",
      "  describe.skipIf(x)('skipped ' + 'joined', () => {});",
      "  test.skip('later', () => {});",
      '  it(name, () => {});',
      "  expect('not a title').toBe(1);",
      '});',
    ].join('\n');
    expect(testTitles(source)).toEqual([
      ['a suite'],
      ['plain'],
      ['shell ', null, ' runs'],
      ['with ', null, ' kept'],
      ['skipped ', 'joined'],
      ['later'],
    ]);
  });

  it('matches a quoted name to the whole title: holes take any text, … stands for words left out', () => {
    expect(namesTitle('plain', ['plain'])).toBe(true);
    expect(namesTitle('plain', ['plain and more'])).toBe(false);
    expect(namesTitle('plain and', ['plain'])).toBe(false);
    expect(namesTitle('shell bash runs', ['shell ', null, ' runs'])).toBe(true);
    expect(namesTitle('shell runs', ['shell ', null, ' runs'])).toBe(false);
    expect(namesTitle('a killed ssh: …', ['a killed ssh: the pane is listed no more'])).toBe(true);
    expect(namesTitle('exec … in a pane', ['exec ', null, ' in a pane'])).toBe(true);
    expect(namesTitle('a killed ssh: …', ['a killed shell: it ends'])).toBe(false);
    expect(namesTitle("the person's shell", ['the person\u2019s shell'])).toBe(true);
  });

  it('names the files a quote stands under: the last path, joined paths, a legend letter; none after a heading', () => {
    const page = [
      '# Page',
      'See "A heading" first. `test/a/one.test.ts` › "first", › "second";',
      '`test/a/two.test.ts` and `three.test.ts` › "both" (`not/a/test.ts`) "still both".',
      'Legend: `test/b/x.test.ts` and `y.test.ts` (X), `test/c/z.test.ts` (Z).',
      'X › "in x or y"; Z › "in z"; Q › "no legend"',
      '## Next',
      '"unnamed"',
    ].join('\n');
    expect(quotedNames(page).map((q) => [q.text, q.files, q.line])).toEqual([
      ['A heading', undefined, 2],
      ['first', ['test/a/one.test.ts'], 2],
      ['second', ['test/a/one.test.ts'], 2],
      ['both', ['test/a/two.test.ts', 'test/a/three.test.ts'], 3],
      ['still both', ['test/a/two.test.ts', 'test/a/three.test.ts'], 3],
      ['in x or y', ['test/b/x.test.ts', 'test/b/y.test.ts'], 5],
      ['in z', ['test/c/z.test.ts'], 5],
      ['no legend', ['(no legend names Q)'], 5],
      ['unnamed', undefined, 7],
    ]);
  });

  it('says which quoted names and paths the tests do not bear out', () => {
    const titles = new Map([
      ['test/a/one.test.ts', [['first'], ['moved here']]],
      ['test/a/two.test.ts', [['second']]],
    ]);
    const page = [
      '## Claims',
      '- **A lead.** `test/a/one.test.ts` › "first", › "second", › "gone".',
      '- `test/a/nowhere.test.ts` › "moved here". See "A lead" and "Claims".',
      '## Other',
      '"second", with no file named since the heading, is any test\'s.',
    ].join('\n');
    expect(staleTitles('P.md', page, titles)).toEqual([
      'P.md:2: no test titled "second" in test/a/one.test.ts (it is in test/a/two.test.ts)',
      'P.md:2: no test titled "gone" in test/a/one.test.ts',
      'P.md:3: no test titled "moved here" in test/a/nowhere.test.ts (it is in test/a/one.test.ts)',
    ]);
    expect(missingTestPaths('P.md', page, (p) => titles.has(p))).toEqual([
      'P.md:3: no such test file or folder: test/a/nowhere.test.ts',
    ]);
  });
});

describe('the tests the pages name', () => {
  it('every test path a page names exists', () => {
    for (const page of docPages(ROOT))
      expect(missingTestPaths(page, readFileSync(join(ROOT, page), 'utf8'), (p) => existsSync(join(ROOT, p)))).toEqual(
        [],
      );
  });

  it('every test SECURITY.md quotes for a claim is a test of the file it names', () => {
    const page = readFileSync(join(ROOT, 'SECURITY.md'), 'utf8');
    expect(quotedNames(page).length).toBeGreaterThan(200);
    expect(staleTitles('SECURITY.md', page, treeTitles(ROOT))).toEqual([]);
  });
});

// Every relative link of README.md, docs/*.md, SECURITY.md and BENCHMARKS.md resolves: the file
// exists and, for `#anchor`, one of its headings makes that anchor as GitHub forms it. The front
// page reaches every docs/ file, and each of them links back to it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, docPages, relativeLinks, slug } from '../../lab/doc-links.js';

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

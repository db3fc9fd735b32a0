// The helper stays small: the sandbox's modules (and bwrap's) load only when a sandboxed run comes.
// Every module a helper loads at start is reached by static imports from helper/helper.ts (which
// helper/main.ts loads); none of them may import the sandbox code except as types (erased when
// built) or through import(), which the helper's bundle keeps lazy too (scripts/build-helper.mjs).
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../lab/product.js';

const LAZY = [
  join(ROOT, 'helper', 'walls', 'sandbox.ts'),
  join(ROOT, 'helper', 'walls', 'policy.ts'),
  join(ROOT, 'helper', 'walls', 'bwrap-args.ts'),
  join(ROOT, 'helper', 'walls', 'facts.ts'),
  join(ROOT, 'src', 'core', 'os', 'bwrap.ts'),
];

/** The modules `file` imports statically for their values (`import type` and `import()` left out). */
function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^import\s+(?!type\b)([^'";]*?)\s*from\s*'(\.[^']+)'/gm)) {
    // `import { type A, type B } from` brings in no value either.
    const names = m[1] ?? '';
    if (
      /^\{[^}]*\}$/.test(names) &&
      names
        .slice(1, -1)
        .split(',')
        .every((n) => /^\s*type\s/.test(n) || n.trim() === '')
    )
      continue;
    out.push(resolve(dirname(file), m[2]!.replace(/\.js$/, '.ts')));
  }
  return out;
}

describe('the sandbox loads lazily', () => {
  it('no module a helper loads at start imports the sandbox code', () => {
    const seen = new Set<string>();
    const queue = [join(ROOT, 'helper', 'helper.ts')];
    while (queue.length > 0) {
      const f = queue.pop()!;
      if (seen.has(f)) continue;
      seen.add(f);
      queue.push(...valueImports(f));
    }
    expect(seen.size).toBeGreaterThan(10);
    expect([...seen].filter((f) => LAZY.includes(f))).toEqual([]);
    // And the one place that loads it does so with import().
    expect(readFileSync(join(ROOT, 'helper', 'queue', 'dispatch.ts'), 'utf8')).toContain(
      "await import('../walls/sandbox.js')",
    );
  });
});

// No import circles among the product's and the scripts' .ts files (src/, helper/, scripts/):
// each room's interface files name no implementation, and a switch sits beside them
// (helper/shell/shell.ts and shell-for.ts). The finder itself is checked on small made-up trees.
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { findCircles, importGraph, readSources } from '../../lab/import-circles.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const circlesOf = (files: Record<string, string>): string[][] =>
  findCircles(importGraph(new Map(Object.entries(files))));

describe('the import-circle finder', () => {
  it('finds a circle of two files, of three, and a file that imports itself', () => {
    expect(
      circlesOf({
        'a/x.ts': "import { y } from './y.js';",
        'a/y.ts': "import type { X } from './x.js';",
        'b/p.ts': "export { q } from '../c/q.js';",
        'c/q.ts': "const r = await import('../b/r.js');",
        'b/r.ts': "type P = typeof import('./p.js');",
        'd/self.ts': "import './self.js';",
      }),
    ).toEqual([
      ['a/x.ts', 'a/y.ts', 'a/x.ts'],
      ['b/p.ts', 'c/q.ts', 'b/r.ts', 'b/p.ts'],
      ['d/self.ts', 'd/self.ts'],
    ]);
  });

  it('finds none in a tree without one, and reads neither comments, strings nor packages as imports', () => {
    expect(
      circlesOf({
        'a/x.ts': "import { y } from './y.js';\nimport { z } from 'node:fs';",
        'a/y.ts': "// import { x } from './x.js';\nconst s = \"import('./x.js')\";\n/* import './x.js' */",
        'a/z.ts': "import { x } from './x.js';\nimport { y } from './y.js';",
      }),
    ).toEqual([]);
  });

  it('resolves ./name.js to name.ts, ./name.mjs to name.mts and a folder to its index.ts', () => {
    const g = importGraph(
      new Map([
        ['s/a.ts', "import './b.js';\nimport './c.mjs';\nimport './d';\nimport './missing.js';"],
        ['s/b.ts', ''],
        ['s/c.mts', ''],
        ['s/d/index.ts', ''],
      ]),
    );
    expect(g.get('s/a.ts')).toEqual(['s/b.ts', 's/c.mts', 's/d/index.ts']);
  });
});

describe('the repository', () => {
  it('has no import circle among src/, helper/ and scripts/', () => {
    const sources = readSources(ROOT, ['src', 'helper', 'scripts']);
    expect(sources.size).toBeGreaterThan(100);
    const shown = findCircles(importGraph(sources)).map((c) => c.join(' -> '));
    expect(shown).toEqual([]);
  });
});

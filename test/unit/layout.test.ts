// The layering of src/ and helper/, computed from the real import statements (docs/development.md,
// "Layout"): each folder is a node, and no folder imports one that imports it back (directly or
// through others); nothing in src/ imports helper/; the shared core (src/core/) imports only itself;
// helper/ imports from src/ only the shared core. No list of layers: the tree's folders are the rule.
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { folderCircles, importGraph, readSources, twoWayFolders } from '../../lab/import-circles.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every import that crosses a boundary the tree draws, as `FILE -> TARGET (why)`. */
function boundaryBreaks(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const why =
        file.startsWith('src/') && target.startsWith('helper/')
          ? 'nothing in src/ imports helper/'
          : file.startsWith('src/core/') && !target.startsWith('src/core/')
            ? 'the shared core imports only the shared core'
            : file.startsWith('helper/') && target.startsWith('src/') && !target.startsWith('src/core/')
              ? 'helper/ imports from src/ only the shared core'
              : undefined;
      if (why) out.push(`${file} -> ${target} (${why})`);
    }
  }
  return out.sort();
}

const graphOf = (files: Record<string, string>): Map<string, string[]> => importGraph(new Map(Object.entries(files)));

describe('the folder-level layering check', () => {
  it('finds a circle between two folders, one through a third, and one between a folder and its subfolder', () => {
    const g = graphOf({
      'h/queue/job.ts': "import type { Run } from '../run/runner.js';",
      'h/run/runner.ts': "export const r = 1;\nimport type { Job } from '../queue/job.js';",
      'h/a/x.ts': "import '../b/y.js';",
      'h/b/y.ts': "export * from '../c/z.js';",
      'h/c/z.ts': "type T = typeof import('../a/w.js');",
      'h/a/w.ts': '',
      'h/shell/for.ts': "void import('./bash/bash.js');",
      'h/shell/bash/bash.ts': "import type { Shell } from '../shell.js';",
      'h/shell/shell.ts': '',
    });
    expect(folderCircles(g)).toEqual([
      'h/a -> h/b -> h/c -> h/a (h/a/x.ts -> h/b/y.ts; h/b/y.ts -> h/c/z.ts; h/c/z.ts -> h/a/w.ts)',
      'h/queue -> h/run -> h/queue (h/queue/job.ts -> h/run/runner.ts; h/run/runner.ts -> h/queue/job.ts)',
      'h/shell -> h/shell/bash -> h/shell (h/shell/for.ts -> h/shell/bash/bash.ts; h/shell/bash/bash.ts -> h/shell/shell.ts)',
    ]);
  });

  it('finds none where the arrows go one way, whatever comments and strings say', () => {
    const g = graphOf({
      'h/queue/job.ts': "import type { Run } from '../run/runner.js';",
      'h/run/runner.ts': "// import { Job } from '../queue/job.js';\nconst s = \"import('../queue/job.js')\";",
      'h/shell-for.ts': "void import('./shell/bash/bash.js');",
      'h/shell/bash/bash.ts': "import type { Shell } from '../shell.js';",
      'h/shell/shell.ts': '',
    });
    expect(folderCircles(g)).toEqual([]);
  });

  it('names each import that crosses a boundary of the tree, and lets the allowed ones pass', () => {
    const g = graphOf({
      'src/core/os/a.ts': "import '../../broker/b.js';\nimport '../protocol/c.js';",
      'src/broker/b.ts': "import '../../helper/run/d.js';\nimport '../core/protocol/c.js';",
      'src/core/protocol/c.ts': '',
      'helper/run/d.ts': "import '../../src/broker/b.js';\nimport '../../src/core/os/a.js';",
    });
    expect(boundaryBreaks(g)).toEqual([
      'helper/run/d.ts -> src/broker/b.ts (helper/ imports from src/ only the shared core)',
      'src/broker/b.ts -> helper/run/d.ts (nothing in src/ imports helper/)',
      'src/core/os/a.ts -> src/broker/b.ts (the shared core imports only the shared core)',
    ]);
  });
});

describe('the repository', () => {
  const graph = importGraph(readSources(ROOT, ['src', 'helper']));

  it('has no circle between the folders of src/ and helper/', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(folderCircles(graph)).toEqual([]);
    expect(twoWayFolders(graph)).toEqual([]);
  });

  it('keeps src/ off helper/, the shared core to itself, and helper/ to the shared core of src/', () => {
    expect(graph.has('src/core/protocol/messages.ts')).toBe(true);
    expect(boundaryBreaks(graph)).toEqual([]);
  });
});

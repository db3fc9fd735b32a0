// The import rule of the layout (docs/development.md, "Layout"): the shared core (src/protocol, src/enrollment,
// src/os, src/audit, and the code generated from schemas/) imports only the shared core; helper/
// imports only the shared core and itself; nothing in src/ imports helper/.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SHARED_CORE = ['src/protocol/', 'src/enrollment/', 'src/os/', 'src/audit/', 'generated/'];

type Area = 'shared' | 'helper' | 'src' | 'elsewhere';
function areaOf(path: string): Area {
  if (SHARED_CORE.some((p) => path.startsWith(p))) return 'shared';
  if (path.startsWith('helper/')) return 'helper';
  if (path.startsWith('src/')) return 'src';
  return 'elsewhere';
}

/** Relative module specifiers of one file: static imports and re-exports, and import() calls. */
function relativeImports(source: string): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((s) => s.startsWith('./') || s.startsWith('../'));
}

/** Every import that breaks the rule, as "FILE -> TARGET (why)"; paths relative to the repo root. */
function importViolations(files: Array<{ path: string; source: string }>): string[] {
  const out: string[] = [];
  for (const { path, source } of files) {
    const from = areaOf(path);
    for (const spec of relativeImports(source)) {
      const target = posix.normalize(posix.join(posix.dirname(path), spec));
      const to = areaOf(target);
      const why =
        from === 'shared' && to !== 'shared'
          ? 'the shared core imports only the shared core'
          : from === 'helper' && to !== 'shared' && to !== 'helper'
            ? 'helper/ imports only the shared core and helper/'
            : from === 'src' && to === 'helper'
              ? 'nothing in src/ imports helper/'
              : undefined;
      if (why) out.push(`${path} -> ${target} (${why})`);
    }
  }
  return out;
}

function sources(dir: string): Array<{ path: string; source: string }> {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => {
      const path = relative(root, join(root, dir, f))
        .split('\\')
        .join('/');
      return { path, source: readFileSync(join(root, path), 'utf8') };
    });
}

describe('the import rule', () => {
  it('holds for every .ts under src/ and helper/', () => {
    const files = [...sources('src'), ...sources('helper')];
    expect(files.length).toBeGreaterThan(30);
    expect(files.some((f) => f.path === 'helper/main.ts')).toBe(true);
    expect(importViolations(files)).toEqual([]);
  });

  it('catches each kind of break, static or dynamic, and lets the allowed ones pass', () => {
    const files = [
      // Breaks.
      { path: 'src/protocol/a.ts', source: "import { x } from '../broker/run-tool.js';" },
      { path: 'src/os/b.ts', source: "export { y } from '../../helper/runner.js';" },
      { path: 'src/audit/c.ts', source: "const m = await import('../mcp/server.js');" },
      { path: 'src/enrollment/d.ts', source: "import type { Z } from '../cli/output.js';" },
      { path: 'helper/e.ts', source: "import { runTool } from '../src/broker/run-tool.js';" },
      { path: 'helper/f.ts', source: "void import('../src/cli/main.js');" },
      { path: 'src/broker/g.ts', source: "import { Run } from '../../helper/runner.js';" },
      { path: 'src/mcp/h.ts', source: "import '../../helper/main.js';" },
      // Allowed.
      {
        path: 'src/protocol/i.ts',
        source: "import { j } from '../os/proc.js';\nimport type * as V from '../../generated/wire-validators.cjs';",
      },
      {
        path: 'helper/k.ts',
        source:
          "import { l } from './runner.js';\nimport { m } from '../src/protocol/token.js';\nimport { spawn } from 'node:child_process';",
      },
      {
        path: 'src/cli/n.ts',
        source: "import { o } from '../broker/registry.js';\n// import { p } from '../../helper/main.js';",
      },
    ];
    expect(importViolations(files)).toEqual([
      'src/protocol/a.ts -> src/broker/run-tool.js (the shared core imports only the shared core)',
      'src/os/b.ts -> helper/runner.js (the shared core imports only the shared core)',
      'src/audit/c.ts -> src/mcp/server.js (the shared core imports only the shared core)',
      'src/enrollment/d.ts -> src/cli/output.js (the shared core imports only the shared core)',
      'helper/e.ts -> src/broker/run-tool.js (helper/ imports only the shared core and helper/)',
      'helper/f.ts -> src/cli/main.js (helper/ imports only the shared core and helper/)',
      'src/broker/g.ts -> helper/runner.js (nothing in src/ imports helper/)',
      'src/mcp/h.ts -> helper/main.js (nothing in src/ imports helper/)',
    ]);
  });
});

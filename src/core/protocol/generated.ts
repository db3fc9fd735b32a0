// The code `npm run build` generates from schemas/ into generated/ (dist/generated/ once built).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Loads one generated module with require, not import: importing CommonJS from an ES module
 * starts Node's export scanner (a WebAssembly lexer), about 8 MB resident in every helper.
 * A missing file is a tree that was never built: said so, never worked around.
 */
export function loadGenerated<T>(
  name: 'wire-validators' | 'contract-validators' | 'build-id' | 'lean-schemas' | 'mcp-versions' | 'msgpackr',
): T {
  // From src/core/protocol/ and from dist/src/core/protocol/ alike, generated/ is three levels up.
  const specifier = `../../../generated/${name}.cjs`;
  let path: string;
  try {
    path = require.resolve(specifier);
  } catch (e) {
    throw new Error(`generated/${name}.cjs is missing: run 'npm run build' in the tmux-run package`, { cause: e });
  }
  return require(path) as T;
}

// The schemas tools/list serves for every tool but tmux_run: the contract's files without their
// annotations (descriptions), generated at build time (scripts/build-lean-schemas.mjs), so they
// accept and produce exactly the contract's documents while every agent's context carries less.
import { loadGenerated } from '../core/protocol/generated.js';
import type * as Generated from '../../generated/lean-schemas.cjs';

const { LEAN_SCHEMAS } = loadGenerated<typeof Generated>('lean-schemas');

/** The lean form of schemas/FILE; a file the build did not see is a defect, said so at start. */
export function leanSchema(file: string): Record<string, unknown> {
  const schema = LEAN_SCHEMAS[file];
  if (!schema) throw new Error(`schemas/${file} has no lean form: run 'npm run build' in the tmux-run package`);
  return schema;
}

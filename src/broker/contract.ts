// The contract's JSON Schemas (schemas/, copies of the published contract), validated with ajv
// code generated from them at build time (scripts/build-validators.mjs).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../os/package-root.js';
import { loadGenerated } from '../protocol/generated.js';
import type { ErrorObject } from 'ajv/dist/2020.js';
import type * as Generated from '../../generated/contract-validators.cjs';

export const loadSchema = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(packageRoot(), 'schemas', name), 'utf8')) as Record<string, unknown>;

export const runInputSchema = loadSchema('tmux_run.input.schema.json');
export const runOutputSchema = loadSchema('tmux_run.output.schema.json');
export const panesOutputSchema = loadSchema('tmux_enrolled_panes.output.schema.json');
export const panesInputSchema = loadSchema('tmux_enrolled_panes.input.schema.json');
export const startInputSchema = loadSchema('tmux_run_start.input.schema.json');
export const waitInputSchema = loadSchema('tmux_run_wait.input.schema.json');
export const cancelInputSchema = loadSchema('tmux_run_cancel.input.schema.json');
export const longOutputSchema = loadSchema('tmux_run_long.output.schema.json');
export const runsInputSchema = loadSchema('tmux_runs.input.schema.json');
export const runsOutputSchema = loadSchema('tmux_runs.output.schema.json');

type Validator = Generated.Validator;
type Compiled = Record<
  | 'runInput'
  | 'runOutput'
  | 'panesInput'
  | 'panesOutput'
  | 'startInput'
  | 'waitInput'
  | 'cancelInput'
  | 'longOutput'
  | 'runsInput'
  | 'runsOutput',
  Validator
>;

/**
 * The validators `npm run build` generates from these very schemas (compiling the four with ajv
 * here took the server about 80 ms before it could answer); there is no other validation path.
 */
const compiled = loadGenerated<Compiled>('contract-validators');

export type Validation = { ok: true } | { ok: false; message: string };

/** Says which input, what was expected (never the value that arrived: it may be a script). */
export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return 'is invalid';
  const where = e.instancePath === '' ? 'arguments' : `argument ${e.instancePath.slice(1).replace(/\//g, '.')}`;
  switch (e.keyword) {
    case 'required':
      return `${where} must include ${(e.params as { missingProperty: string }).missingProperty}`;
    case 'additionalProperties':
      return `${where} has an unknown property ${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty).slice(0, 80)}`;
    case 'pattern':
      return e.instancePath === '/script'
        ? `${where} must not contain NUL characters`
        : `${where} must match ${(e.params as { pattern: string }).pattern}`;
    default:
      return `${where} ${e.message ?? 'is invalid'}`;
  }
}

function check(v: Validator, data: unknown): Validation {
  return v(data) ? { ok: true } : { ok: false, message: describeErrors(v.errors) };
}

export const validateRunInput = (d: unknown): Validation => check(compiled.runInput, d);
export const validateRunOutput = (d: unknown): Validation => check(compiled.runOutput, d);
export const validatePanesInput = (d: unknown): Validation => check(compiled.panesInput, d);
export const validatePanesOutput = (d: unknown): Validation => check(compiled.panesOutput, d);
export const validateStartInput = (d: unknown): Validation => check(compiled.startInput, d);
export const validateWaitInput = (d: unknown): Validation => check(compiled.waitInput, d);
export const validateCancelInput = (d: unknown): Validation => check(compiled.cancelInput, d);
export const validateLongOutput = (d: unknown): Validation => check(compiled.longOutput, d);
export const validateRunsInput = (d: unknown): Validation => check(compiled.runsInput, d);
export const validateRunsOutput = (d: unknown): Validation => check(compiled.runsOutput, d);

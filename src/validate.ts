// The contract's JSON Schemas (schemas/, copies of the published contract), compiled once with ajv.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020Module, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;

/** The repository root, from this module's place in src/ or dist/src/. */
export const ROOT = (() => {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.endsWith(join('dist', 'src')) ? join(here, '..', '..') : join(here, '..');
})();

export const loadSchema = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(ROOT, 'schemas', name), 'utf8')) as Record<string, unknown>;

export const runInputSchema = loadSchema('tmux_run.input.schema.json');
export const runOutputSchema = loadSchema('tmux_run.output.schema.json');
export const panesOutputSchema = loadSchema('tmux_enrolled_panes.output.schema.json');
export const panesInputSchema = loadSchema('tmux_enrolled_panes.input.schema.json');

const ajv = new Ajv2020({ allErrors: false, strict: false });
const compiled = {
  runInput: ajv.compile(runInputSchema),
  runOutput: ajv.compile(runOutputSchema),
  panesInput: ajv.compile(panesInputSchema),
  panesOutput: ajv.compile(panesOutputSchema),
};

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
      return e.instancePath === '/script' ? `${where} must not contain NUL characters` : `${where} must match ${(e.params as { pattern: string }).pattern}`;
    default:
      return `${where} ${e.message ?? 'is invalid'}`;
  }
}

function check(v: ValidateFunction, data: unknown): Validation {
  return v(data) ? { ok: true } : { ok: false, message: describeErrors(v.errors) };
}

export const validateRunInput = (d: unknown): Validation => check(compiled.runInput, d);
export const validateRunOutput = (d: unknown): Validation => check(compiled.runOutput, d);
export const validatePanesInput = (d: unknown): Validation => check(compiled.panesInput, d);
export const validatePanesOutput = (d: unknown): Validation => check(compiled.panesOutput, d);

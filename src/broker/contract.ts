// The contract's JSON Schemas (schemas/, copies of the published contract), validated with ajv
// code generated from them at build time (scripts/build-validators.mjs).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../core/os/package-root.js';
import { loadGenerated } from '../core/protocol/generated.js';
import type { ErrorObject } from 'ajv/dist/2020.js';
import type * as Generated from '../../generated/contract-validators.cjs';

/** One of the contract's schemas as the package ships it (the two tools/list gives whole; the rest are lean: src/mcp/lean-schemas.ts). */
const loadSchema = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(packageRoot(), 'schemas', name), 'utf8')) as Record<string, unknown>;

export const runInputSchema = loadSchema('tmux_run.input.schema.json');
export const runOutputSchema = loadSchema('tmux_run.output.schema.json');

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
  | 'runsOutput'
  | 'outputInput'
  | 'outputOutput'
  | 'inputInput'
  | 'inputOutput'
  | 'screenInput'
  | 'screenOutput',
  Validator
>;

/**
 * The validators `npm run build` generates from these very schemas (compiling the four with ajv
 * here took the server about 80 ms before it could answer); there is no other validation path.
 * Loaded at the first check, not at start: `initialize` and `tools/list` validate nothing.
 */
let loaded: Compiled | undefined;
const compiled = (): Compiled => (loaded ??= loadGenerated<Compiled>('contract-validators'));

export type Validation = { ok: true } | { ok: false; message: string };

/** Says which input, what was expected (never the value that arrived: it may be a script). */
function describeErrors(errors: ErrorObject[] | null | undefined): string {
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
    case 'enum':
      return `${where} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${where} must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    default:
      return `${where} ${e.message ?? 'is invalid'}`;
  }
}

function check(v: Validator, data: unknown): Validation {
  return v(data) ? { ok: true } : { ok: false, message: describeErrors(v.errors) };
}

export const validateRunInput = (d: unknown): Validation => check(compiled().runInput, d);
export const validateRunOutput = (d: unknown): Validation => check(compiled().runOutput, withoutLongData(d));

/** The output schema's maxLength of a stream's `data` (the same for stdout and stderr), if it has one. */
const dataMaxLength = ((): number | undefined => {
  type Node = { properties?: Record<string, Node>; oneOf?: Node[]; maxLength?: number; type?: string };
  const data = (which: string): Node | undefined =>
    (runOutputSchema as Node).oneOf?.[0]?.properties?.data?.properties?.[which]?.properties?.data;
  const [o, e] = [data('stdout'), data('stderr')];
  const keys = (n: Node | undefined): string =>
    Object.keys(n ?? {})
      .sort()
      .join();
  // Only the two keywords reasoned about below, with the same limit on both streams.
  if (!o || !e || keys(o) !== 'maxLength,type' || keys(e) !== 'maxLength,type') return undefined;
  if (o.type !== 'string' || e.type !== 'string' || o.maxLength !== e.maxLength) return undefined;
  return o.maxLength;
})();

/**
 * A success result whose streams' `data` are replaced by '' where the verdict cannot change, so ajv
 * does not walk up to 2 x 262144 characters of output one by one (its maxLength counts code points).
 * Why the verdict is the same: `data`'s only keywords are `type: string` and `maxLength: N`; ajv
 * counts code points, and a string has at most as many code points as UTF-16 units (a surrogate
 * pair is one code point, two units), so `s.length <= N` means s passes maxLength, and '' passes
 * both keywords too. A string longer than N units is left as it is, for ajv to count. (Output of at
 * most 262144 bytes is at most 262144 units as UTF-8 text and 349528 as base64: never over N.)
 */
export function withoutLongData(d: unknown): unknown {
  const max = dataMaxLength;
  if (max === undefined || typeof d !== 'object' || d === null) return d;
  const data = (d as { data?: unknown }).data;
  if (typeof data !== 'object' || data === null) return d;
  const streams = data as { stdout?: unknown; stderr?: unknown };
  const lean = (s: unknown): unknown => {
    if (typeof s !== 'object' || s === null) return s;
    const v = (s as { data?: unknown }).data;
    return typeof v === 'string' && v.length > 0 && v.length <= max ? { ...s, data: '' } : s;
  };
  const [stdout, stderr] = [lean(streams.stdout), lean(streams.stderr)];
  if (stdout === streams.stdout && stderr === streams.stderr) return d;
  return { ...d, data: { ...data, stdout, stderr } };
}
export const validatePanesInput = (d: unknown): Validation => check(compiled().panesInput, d);
export const validatePanesOutput = (d: unknown): Validation => check(compiled().panesOutput, d);
export const validateStartInput = (d: unknown): Validation => check(compiled().startInput, d);
export const validateWaitInput = (d: unknown): Validation => check(compiled().waitInput, d);
export const validateCancelInput = (d: unknown): Validation => check(compiled().cancelInput, d);
export const validateLongOutput = (d: unknown): Validation => check(compiled().longOutput, d);
export const validateRunsInput = (d: unknown): Validation => check(compiled().runsInput, d);
export const validateRunsOutput = (d: unknown): Validation => check(compiled().runsOutput, d);
export const validateOutputInput = (d: unknown): Validation => check(compiled().outputInput, d);
export const validateOutputOutput = (d: unknown): Validation => check(compiled().outputOutput, d);
export const validateInputInput = (d: unknown): Validation => check(compiled().inputInput, d);
export const validateInputOutput = (d: unknown): Validation => check(compiled().inputOutput, d);
export const validateScreenInput = (d: unknown): Validation => check(compiled().screenInput, d);
export const validateScreenOutput = (d: unknown): Validation => check(compiled().screenOutput, d);

// The lean schemas tools/list serves (every tool but tmux_run): each is its contract file with
// annotations only taken out, and accepts exactly the documents the contract's file accepts, fed
// the same documents (generated from the contract's own schema, valid ones and broken ones).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LEAN_SCHEMAS } from '../../generated/lean-schemas.cjs';
import { leanSchema } from '../../scripts/lean-schema.mjs';
import { ROOT, SHARED_CONTRACT } from '../../lab/product.js';

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
type Schema = Record<string, any>;

const schemaFiles = (dir: string | undefined): string[] =>
  dir !== undefined && existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.schema.json')) : [];
const read = (dir: string, file: string): Schema => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Schema;

/**
 * Walks a lean schema beside its source and lists every difference that is not an annotation
 * keyword left out: an independent check of scripts/lean-schema.mjs (a property *named*
 * `description` must survive, a validation keyword must never go).
 */
function differences(full: unknown, lean: unknown, path = '', named = false): string[] {
  if (typeof full !== 'object' || full === null || typeof lean !== 'object' || lean === null)
    return JSON.stringify(full) === JSON.stringify(lean) ? [] : [`${path}: ${JSON.stringify(lean)}`];
  if (Array.isArray(full) !== Array.isArray(lean)) return [`${path}: array and object`];
  const out: string[] = [];
  for (const [k, v] of Object.entries(full)) {
    if (!(k in lean)) {
      if (named || Array.isArray(full) || !['description', 'title', '$comment', 'examples'].includes(k))
        out.push(`${path}/${k} is missing`);
      continue;
    }
    const data = ['const', 'enum', 'default'].includes(k) && !named;
    out.push(
      ...(data
        ? JSON.stringify(v) === JSON.stringify((lean as Schema)[k])
          ? []
          : [`${path}/${k} changed`]
        : differences(v, (lean as Schema)[k], `${path}/${k}`, !named && k === 'properties')),
    );
  }
  for (const k of Object.keys(lean)) if (!(k in full)) out.push(`${path}/${k} was added`);
  return out;
}

/** Documents shaped by a schema: mostly valid ones, some with a value out of range or a stray key. */
function documents(s: Schema, depth = 0): fc.Arbitrary<unknown> {
  const wild = fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 4 }), fc.boolean());
  if (depth > 8) return wild;
  if ('const' in s) return fc.oneof({ weight: 9, arbitrary: fc.constant(s.const) }, { weight: 1, arbitrary: wild });
  if (s.enum) return fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...s.enum) }, { weight: 1, arbitrary: wild });
  if (s.oneOf)
    return fc.oneof(...(s.oneOf as Schema[]).map((b) => documents({ ...s, oneOf: undefined, ...b }, depth + 1)));
  if (s.if && s.then)
    return fc.oneof(
      documents({ ...s, if: undefined, ...s.then }, depth + 1),
      documents({ ...s, if: undefined, ...s.else }, depth + 1),
    );
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  const props = (s.properties ?? {}) as Record<string, Schema>;
  switch (type ?? (s.properties ? 'object' : undefined)) {
    case 'object': {
      const record = fc.record(
        Object.fromEntries(Object.entries(props).map(([k, v]) => [k, documents(v, depth + 1)])),
        { requiredKeys: (s.required ?? []).filter((k: string) => k in props) },
      );
      return fc.oneof(
        { weight: 8, arbitrary: record },
        { weight: 1, arbitrary: record.map((r) => ({ ...r, stray: 1 })) },
        { weight: 1, arbitrary: wild },
      );
    }
    case 'array':
      return fc.array(documents(s.items ?? {}, depth + 1), { maxLength: 3 });
    case 'string': {
      const base = s.pattern
        ? fc.stringMatching(new RegExp(s.pattern as string))
        : fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 12, 12) });
      return fc.oneof({ weight: 9, arbitrary: base }, { weight: 1, arbitrary: wild });
    }
    case 'integer':
    case 'number': {
      const min = (s.minimum as number | undefined) ?? -5;
      const max = (s.maximum as number | undefined) ?? min + 100_000;
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min - 1, max + 1, 1.5), wild);
    }
    case 'boolean':
      return fc.oneof({ weight: 9, arbitrary: fc.boolean() }, { weight: 1, arbitrary: wild });
    case 'null':
      return fc.oneof({ weight: 9, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: wild });
    default:
      return wild;
  }
}

describe('lean schemas', () => {
  const repo = join(ROOT, 'schemas');
  const files = schemaFiles(repo);

  it('exist for every schema in schemas/, generated from it with annotations only taken out', () => {
    expect(Object.keys(LEAN_SCHEMAS).sort()).toEqual(files.sort());
    for (const file of files) {
      const full = read(repo, file);
      expect(differences(full, LEAN_SCHEMAS[file]), file).toEqual([]);
      expect(JSON.stringify(LEAN_SCHEMAS[file]), file).not.toMatch(/"(description|title)":"/);
    }
  });

  it('keep a property named description and every validation keyword', () => {
    const s = {
      type: 'object',
      description: 'dropped',
      properties: { description: { type: 'string', description: 'dropped', maxLength: 3 } },
      required: ['description'],
      oneOf: [{ title: 'dropped', const: { description: 'data' } }],
    };
    expect(leanSchema(s)).toStrictEqual({
      type: 'object',
      properties: { description: { type: 'string', maxLength: 3 } },
      required: ['description'],
      oneOf: [{ const: { description: 'data' } }],
    });
  });

  // The published contract's files too, the tools still to come included (their lean form is
  // what tools/list will serve once they are listed: test/mcp/tools-list.test.ts budgets for it).
  const published = [...new Set([...files, ...schemaFiles(SHARED_CONTRACT)])].map((file) => ({
    file,
    dir: schemaFiles(SHARED_CONTRACT).includes(file) ? SHARED_CONTRACT! : repo,
  }));
  it.each(published)('$file: the lean form accepts exactly what the contract accepts', ({ file, dir }) => {
    const ajv = new Ajv2020({ strict: false });
    const full = read(dir, file);
    const [a, b] = [ajv.compile(full), ajv.compile(leanSchema(full) as Schema)];
    let valid = 0;
    fc.assert(
      fc.property(documents(full), (doc) => {
        const verdict = a(doc);
        if (verdict) valid++;
        expect(b(doc)).toBe(verdict);
      }),
      { numRuns: 300, seed: 32 },
    );
    // The documents exercise the schema: some pass, some fail (a corpus that never passes proves nothing).
    expect(valid, `${file}: valid documents`).toBeGreaterThan(0);
    expect(valid, `${file}: invalid documents`).toBeLessThan(300);
  });
});

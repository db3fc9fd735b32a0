// What "lean" means for a tool schema served in tools/list: the same JSON Schema without the
// annotation keywords that never change what validates (`description`, `title`, `$comment`,
// `examples`), so it accepts exactly the documents the contract's file accepts. A property
// *named* `description` (a key of `properties`) is kept: only keywords are dropped.
export const ANNOTATIONS = new Set(['description', 'title', '$comment', 'examples']);

/** Keywords whose value maps names to subschemas (the names are data, not keywords). */
const NAMED_SUBSCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

export function leanSchema(node) {
  if (Array.isArray(node)) return node.map(leanSchema);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (ANNOTATIONS.has(key)) continue;
    out[key] = NAMED_SUBSCHEMAS.has(key)
      ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, leanSchema(sub)]))
      : ['const', 'enum', 'default', 'required'].includes(key)
        ? value
        : leanSchema(value);
  }
  return out;
}

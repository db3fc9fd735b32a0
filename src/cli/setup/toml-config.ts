// Merging the server's entry into Codex's config.toml with a real TOML parser (smol-toml). When
// the table is absent it is appended as text, so the person's file stays exactly as written
// (comments, order, layout), after checking that the result parses to the old document plus the
// new table. When an entry with other values is there, or appending would not parse (say the
// servers are an inline table), the document is parsed, changed and written anew: its values
// are kept, its comments and layout are not (the result says `rewritten`). Pure: text in, text out.
import { isDeepStrictEqual } from 'node:util';
import { parse, stringify, type TomlTable } from 'smol-toml';
import { ConfigError, type MergeResult } from './merge.js';

const isTable = (v: unknown): v is TomlTable =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** The document as Codex reads it (integers kept apart from floats); ConfigError when it does not parse. */
export function parseToml(text: string): TomlTable {
  try {
    return parse(text, { integersAsBigInt: true });
  } catch (e) {
    throw new ConfigError(`it is not valid TOML (${(e as Error).message.split('\n')[0]})`);
  }
}

/** `current` with `entry`'s keys set (env merged key by key); the person's other keys kept. */
function withEntry(current: unknown, entry: Record<string, unknown>): TomlTable {
  const out: TomlTable = isTable(current) ? { ...current } : {};
  for (const [key, value] of Object.entries(entry)) {
    const had = out[key];
    out[key] = key === 'env' && isTable(had) && isTable(value) ? { ...had, ...value } : (value as TomlTable[string]);
  }
  return out;
}

/** True when `current` already has every key of `entry` with the same value. */
function hasEntry(current: unknown, entry: Record<string, unknown>): boolean {
  return isTable(current) && isDeepStrictEqual(plain(withEntry(current, entry)), plain(current));
}

/** `text` with `[CONTAINER.NAME]` holding `entry`'s keys; `unchanged` when it does already. */
export function mergeToml(text: string, container: string, name: string, entry: Record<string, unknown>): MergeResult {
  const doc = parseToml(text);
  const servers = doc[container];
  if (servers !== undefined && !isTable(servers)) throw new ConfigError(`its "${container}" is not a table`);
  const current = servers?.[name];
  if (hasEntry(current, entry)) return { status: 'unchanged', text, previous: current };
  const want: TomlTable = { ...doc, [container]: { ...(servers ?? {}), [name]: withEntry(current, entry) } };
  if (current === undefined) {
    const appended = appendTable(text, container, name, entry);
    if (parsesTo(appended, want)) return { status: 'added', text: appended, previous: undefined };
  }
  // Integers were read as BigInt, so every JS number is a TOML float and stays one.
  const rewritten = stringify(want, { numbersAsFloat: true });
  if (!parsesTo(rewritten, want))
    throw new Error('internal error: the rewritten config.toml would not read back the same; nothing written');
  return { status: current === undefined ? 'added' : 'updated', text: rewritten, previous: current, rewritten: true };
}

/** The text with the new table after everything else, one blank line apart. */
function appendTable(text: string, container: string, name: string, entry: Record<string, unknown>): string {
  const table = stringify({ [container]: { [name]: entry } });
  if (text.trim() === '') return table;
  return `${text}${text.endsWith('\n') ? '' : '\n'}\n${table}`;
}

/** `v` with every table a plain object (the parser makes them without a prototype), for comparing. */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (!isTable(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
}

function parsesTo(text: string, want: TomlTable): boolean {
  try {
    return isDeepStrictEqual(plain(parse(text, { integersAsBigInt: true })), plain(want));
  } catch {
    return false;
  }
}

// Merging the server's entry into a client's JSON settings: parsed first (refused when it does
// not parse), changed by minimal text edits so the rest of the file stays as the person wrote it
// (comments too, where the client allows them), and the result parsed again and compared with
// what was meant before anything is written. Pure: text in, text out.
import { isDeepStrictEqual } from 'node:util';
import { applyEdits, modify, parse, printParseErrorCode, type FormattingOptions, type ParseError } from 'jsonc-parser';
import { ConfigError, type MergeResult } from './merge.js';

/**
 * How the client reads the file: `json` strictly (JSON.parse), `json-comments` with // and /* *\/
 * comments (Gemini CLI strips them), `jsonc` with comments and trailing commas (VS Code).
 */
export type JsonDialect = 'json' | 'json-comments' | 'jsonc';

export interface JsonTarget {
  dialect: JsonDialect;
  /** The object that holds the servers: `mcpServers`, or `servers` for VS Code. */
  container: string;
  name: string;
  /** The keys this entry must have (others the person added are kept). */
  entry: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The 1-based line and column of `offset` in `text`. */
function where(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before[before.length - 1]!.length + 1}`;
}

/** The document's value, read as the client reads it; ConfigError when it does not parse. */
export function parseJson(text: string, dialect: JsonDialect): unknown {
  if (dialect === 'json') {
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new ConfigError(`it is not valid JSON (${(e as Error).message})`);
    }
  }
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: dialect === 'jsonc', disallowComments: false }) as unknown;
  const first = errors[0];
  if (first)
    throw new ConfigError(`it does not parse: ${printParseErrorCode(first.error)} at ${where(text, first.offset)}`);
  return value;
}

/** Indentation and line ends as the file already has them (two spaces when it cannot tell). */
export function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indent = /\n([ \t]+)["}\]]/.exec(text)?.[1];
  if (indent?.startsWith('\t')) return { insertSpaces: false, tabSize: 1, eol };
  return { insertSpaces: true, tabSize: indent ? indent.length : 2, eol };
}

/** The edits (path, value) that turn `current` (the existing entry, if any) into one with `entry`'s keys. */
function changes(container: string, name: string, current: unknown, entry: Record<string, unknown>) {
  const base = [container, name];
  if (!isObject(current)) return [{ path: base, value: entry }];
  const out: { path: string[]; value: unknown }[] = [];
  for (const [key, value] of Object.entries(entry)) {
    const had = current[key];
    if (isDeepStrictEqual(had, value)) continue;
    if (key === 'env' && isObject(value) && isObject(had)) {
      // Only our variables: the person's other env entries stay.
      for (const [k, v] of Object.entries(value)) if (had[k] !== v) out.push({ path: [...base, key, k], value: v });
    } else out.push({ path: [...base, key], value });
  }
  return out;
}

/** Applies `edits` to a copy of `doc` the way the text edits should. */
function expected(doc: Record<string, unknown>, edits: { path: string[]; value: unknown }[]): unknown {
  const copy = structuredClone(doc);
  for (const { path, value } of edits) {
    let node: Record<string, unknown> = copy;
    for (const key of path.slice(0, -1)) {
      if (!isObject(node[key])) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    node[path[path.length - 1]!] = structuredClone(value);
  }
  return copy;
}

/** `text` with the entry merged in: `unchanged` (the same text) when it is there already. */
export function mergeJson(text: string, target: JsonTarget): MergeResult {
  const source = text.trim() === '' ? '{}\n' : text;
  const doc = parseJson(source, target.dialect);
  if (!isObject(doc)) throw new ConfigError('its top level is not a JSON object');
  const servers = doc[target.container];
  if (servers !== undefined && !isObject(servers)) throw new ConfigError(`its "${target.container}" is not an object`);
  const current = servers?.[target.name];
  const edits = changes(target.container, target.name, current, target.entry);
  if (edits.length === 0) return { status: 'unchanged', text, previous: current };
  const formattingOptions = formattingOf(source);
  let out = source;
  for (const e of edits) out = applyEdits(out, modify(out, e.path, e.value, { formattingOptions }));
  if (!out.endsWith('\n') && source.endsWith('\n')) out += formattingOptions.eol;
  // The edit must give exactly the document meant, read as the client reads it.
  if (!isDeepStrictEqual(parseJson(out, target.dialect), expected(doc, edits)))
    throw new Error('internal error: merging the entry would change more than the entry; nothing written');
  return { status: current === undefined ? 'added' : 'updated', text: out, previous: current };
}

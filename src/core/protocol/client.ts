// Who asked for a run: the MCP client's own name and version from `initialize` (clientInfo), as one
// short label that travels with each run request to the helper. A client may say any name: it is a
// label it chose, not an identity. Kept raw (bounded) on the wire and in the audit trail; escaped
// wherever it is shown (src/core/protocol/escape.ts).
import { visibleLine } from './escape.js';

/** Characters kept of a client's name, and of its version. */
export const MAX_CLIENT_NAME = 64;
export const MAX_CLIENT_VERSION = 32;
/** The longest label (name, a space, version): schemas/wire/request.schema.json has the same number. */
export const MAX_CLIENT_LABEL = MAX_CLIENT_NAME + 1 + MAX_CLIENT_VERSION;

const cut = (v: unknown, n: number): string =>
  typeof v === 'string' ? Array.from(v.trim()).slice(0, n).join('').trim() : '';

/** `name version` from a clientInfo, cut to its bounds; undefined when the client named nothing. */
export function clientLabel(info: { name?: unknown; version?: unknown } | undefined): string | undefined {
  if (!info) return undefined;
  const name = cut(info.name, MAX_CLIENT_NAME);
  if (name === '') return undefined;
  const version = cut(info.version, MAX_CLIENT_VERSION);
  return version === '' ? name : `${name} ${version}`;
}

/** A label as a terminal shows it: nothing in it acts on the terminal or hides (visibleLine). */
export const shownClient = (label: string): string => visibleLine(label);

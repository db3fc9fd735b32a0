// The server's answers to what a client's start asks (initialize, tools/list), given before the
// MCP SDK is loaded (src/mcp/front.ts): loading the SDK (its types.js builds some five hundred zod
// schemas) was most of a start beyond Node's own. Each answer is the very line the SDK's server
// writes (the same JSON, key for key), and is given only for a message the SDK would take as it
// stands: anything else, or anything this module is not sure of, is left to the SDK, which then
// answers it itself (`undefined` below). The identity and capabilities are written once, here,
// for the SDK's server too (src/mcp/server.ts). How the two meet: docs/protocol-mcp.md.
import { loadGenerated } from '../core/protocol/generated.js';
import type * as Generated from '../../generated/mcp-versions.cjs';
import { listedTools } from './tools.js';

const { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } = loadGenerated<typeof Generated>('mcp-versions');

/** The name the server gives itself in `initialize`'s serverInfo. */
export const SERVER_NAME = 'tmux-run';

/**
 * What the server offers: tools (no logging, no resources), as its initialize answers them. The
 * SDK's McpServer adds `listChanged: true` to any server's tools (as it sets its own tools
 * handlers, which src/mcp/server.ts replaces), so it is declared here as it is answered.
 * A new object each time.
 */
export const serverCapabilities = (): Json => ({ tools: { listChanged: true } });

/** A JSON-RPC request as the SDK's transport takes it (its envelope checked), or undefined. */
export interface Request {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params?: Record<string, unknown>;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasOnly = (o: Json, keys: readonly string[]): boolean => Object.keys(o).every((k) => keys.includes(k));
const optional = (v: unknown, check: (v: unknown) => boolean): boolean => v === undefined || check(v);
const isString = (v: unknown): boolean => typeof v === 'string';
const isBoolean = (v: unknown): boolean => typeof v === 'boolean';
/** What the SDK's schemas call an object: anything but null whose typeof is object (arrays too). */
const isAnyObject = (v: unknown): boolean => typeof v === 'object' && v !== null;
const isRecordOfObjects = (v: unknown): boolean => isObject(v) && Object.values(v).every(isAnyObject);

/** A line parsed as a JSON-RPC request the SDK's transport takes as it stands (its strict envelope), or undefined. */
export function parseRequest(line: string): Request | undefined {
  let m: unknown;
  try {
    m = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(m) || !hasOnly(m, ['jsonrpc', 'id', 'method', 'params'])) return undefined;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string') return undefined;
  if (!(typeof m.id === 'string' || Number.isSafeInteger(m.id))) return undefined;
  if (!optional(m.params, isObject)) return undefined;
  return m as unknown as Request;
}

/** A line that is the notification `notifications/initialized` as the SDK takes it, plainly (no _meta). */
export function isInitializedNotification(line: string): boolean {
  let m: unknown;
  try {
    m = JSON.parse(line);
  } catch {
    return false;
  }
  return (
    isObject(m) &&
    hasOnly(m, ['jsonrpc', 'method', 'params']) &&
    m.jsonrpc === '2.0' &&
    m.method === 'notifications/initialized' &&
    optional(m.params, (p) => isObject(p) && Object.keys(p).length === 0)
  );
}

/**
 * initialize's params when the SDK's schema surely takes them (protocolVersion, the client's
 * capabilities and clientInfo, in the shapes it knows; keys it does not know it drops, as here).
 * Anything rarer (_meta, icons, tasks) is left to the SDK.
 */
function plainInitializeParams(p: Json | undefined): boolean {
  if (!p || !hasOnly(p, ['protocolVersion', 'capabilities', 'clientInfo'])) return false;
  const { protocolVersion, capabilities: c, clientInfo: i } = p;
  if (typeof protocolVersion !== 'string' || !isObject(c) || !isObject(i)) return false;
  if (typeof i.name !== 'string' || typeof i.version !== 'string' || i.icons !== undefined) return false;
  if (![i.title, i.websiteUrl, i.description].every((v) => optional(v, isString))) return false;
  return (
    optional(c.experimental, isRecordOfObjects) &&
    optional(c.extensions, isRecordOfObjects) &&
    optional(
      c.sampling,
      (s) => isObject(s) && hasOnly(s, ['context', 'tools']) && Object.values(s).every(isAnyObject),
    ) &&
    optional(
      c.elicitation,
      (e) =>
        isObject(e) &&
        hasOnly(e, ['form', 'url']) &&
        optional(e.form, (f) => isObject(f) && optional(f.applyDefaults, isBoolean)) &&
        optional(e.url, isAnyObject),
    ) &&
    optional(c.roots, (r) => isObject(r) && hasOnly(r, ['listChanged']) && optional(r.listChanged, isBoolean)) &&
    c.tasks === undefined
  );
}

/** The SDK server's protocol version for a client that asks for `requested`. */
export const negotiatedVersion = (requested: string): string =>
  SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;

/** The result the SDK's server gives `initialize` (src/mcp/server.ts builds it with these very values). */
export const initializeResult = (requested: string, version: string): Json => ({
  protocolVersion: negotiatedVersion(requested),
  capabilities: serverCapabilities(),
  serverInfo: { name: SERVER_NAME, version },
});

/** The line that answers `request`, an initialize, as the SDK's server would; undefined: leave it to the SDK. */
export function answerInitialize(request: Request, version: string): string | undefined {
  if (request.method !== 'initialize' || !plainInitializeParams(request.params)) return undefined;
  const result = initializeResult(request.params!.protocolVersion as string, version);
  return `${JSON.stringify({ result, jsonrpc: '2.0', id: request.id })}\n`;
}

/** The line that answers `request`, a tools/list (with no _meta; a cursor changes nothing: one page), as the SDK's server would. */
export function answerToolsList(request: Request, enabled: ReadonlySet<string>): string | undefined {
  if (request.method !== 'tools/list') return undefined;
  if (!optional(request.params, (p) => isObject(p) && hasOnly(p, ['cursor']) && optional(p.cursor, isString)))
    return undefined;
  return `${JSON.stringify({ result: { tools: listedTools(enabled) }, jsonrpc: '2.0', id: request.id })}\n`;
}

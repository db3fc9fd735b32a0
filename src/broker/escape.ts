// Escaping of text that came from outside (tmux names, paths, audit entries) before it is shown:
// in a terminal by the CLI, or to an MCP client in a result's message or a listing's text.

export { escapeControls, escapeOutput } from '../core/protocol/escape.js';

const hex2 = (c: string): string => c.charCodeAt(0).toString(16).padStart(2, '0');

/**
 * JSON text on one line whose strings hold no raw DEL or C1 controls either (JSON.stringify
 * escapes only C0): the result parses to the same value.
 */
export function safeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f]/g, (c) => `\\u00${hex2(c)}`);
}

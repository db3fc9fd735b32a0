// Escaping of text that came from outside (tmux names, paths, audit entries) before it is shown:
// in a terminal by the CLI, or to an MCP client in a result's message or a listing's text.

/** C0 controls, DEL and C1 controls: anything a terminal might act on instead of drawing. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

const hex2 = (c: string): string => c.charCodeAt(0).toString(16).padStart(2, '0');

/**
 * Replaces every C0/C1 control character and DEL with a visible `\xHH` escape, so printed text
 * can never move the cursor, change colours or retitle the terminal. Everything else is kept.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => `\\x${hex2(c)}`);
}

/**
 * JSON text on one line whose strings hold no raw DEL or C1 controls either (JSON.stringify
 * escapes only C0): the result parses to the same value.
 */
export function safeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f]/g, (c) => `\\u00${hex2(c)}`);
}

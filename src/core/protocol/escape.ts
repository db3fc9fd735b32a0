// The rule for showing outside text in a terminal, in one place: the broker's messages and
// listings, the CLI, and the script lines the helper sends for the person to approve.

/** C0 controls, DEL and C1 controls: anything a terminal might act on instead of drawing. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
/** Those, and every invisible formatting character (bidirectional overrides, zero-width characters, line and paragraph separators). */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

const hex = (c: string): string => {
  const n = c.codePointAt(0) ?? 0;
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u{${n.toString(16)}}`;
};

/**
 * Replaces every C0/C1 control character and DEL with a visible `\xHH` escape, so printed text
 * can never move the cursor, change colours or retitle the terminal. Everything else is kept.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, hex);
}

/** What escapeOutput escapes: the controls but newline and tab. */
const OUTPUT_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * A script's output in a result's text rendering (a client may print it to a terminal): every
 * control character but newline and tab as a visible `\xHH`, so an escape sequence or a carriage
 * return in the output can neither act on the client's terminal nor hide text from whoever reads
 * it. The structured result keeps the exact bytes.
 */
export function escapeOutput(text: string): string {
  return text.replace(OUTPUT_CONTROLS, hex);
}

/**
 * `text` as one line that shows exactly what it holds: control characters as `\xHH` (as
 * escapeControls), and invisible formatting characters as `\u{HHHH}`, so that what a person
 * reads before approving a script is what runs (no right-to-left override reorders it, no
 * zero-width character hides in it).
 */
export function visibleLine(text: string): string {
  return text.replace(HIDDEN, hex);
}

// Ask mode's details for the person: what the shell shows before it asks for y, n or a.
import { visibleLine } from '../../src/core/protocol/escape.js';

/** Script lines shown in the question. */
export const PREVIEW_LINES = 5;
/** Characters kept of each shown line, after escaping (the shell then cuts to its width). */
export const PREVIEW_CHARS = 200;
/** The separator between preview lines on the channel: a control character, so escaped text never holds it. */
export const PREVIEW_SEPARATOR = '\x1f';
/** What comes before who asked, after the preview (a control character too). */
export const CLIENT_SEPARATOR = '\x1e';
/** What comes before the line about the run's input, last (a control character too). */
export const INPUT_SEPARATOR = '\x1d';
/** The longest wait for the person the shell may ask for (TMUX_RUN_APPROVE_TIMEOUT), in seconds. */
export const MAX_APPROVAL_S = 86400;
/** How much longer than the person's timeout the helper waits for the shell's answer. */
export const APPROVAL_MARGIN_MS = 5000;

/** A run as the person is asked about it. */
export interface RunDetails {
  runId: string;
  digest: string;
  script: string;
  /** Who asked (src/core/protocol/client.ts), when the client named itself. */
  client?: string;
  /** What the run reads, when it takes input (tmux_run_start's input pipe or terminal). */
  input?: 'pipe' | 'terminal';
}

/** The question's line about a run that takes input: the person approves the run, not each input. */
export const inputNote = (input: 'pipe' | 'terminal'): string =>
  `it takes input (${input}): what the agent sends it is not asked about again`;

/** One shown line: escaped so that nothing in it acts on the terminal or hides, then cut. */
export function previewLine(line: string): string {
  let out = '';
  for (const ch of line) {
    const shown = visibleLine(ch);
    if (out.length + shown.length > PREVIEW_CHARS) return `${out}...`;
    out += shown;
  }
  return out;
}

/** The first lines of a script as the person is shown them (escaped, cut), and how many lines it has. */
export function scriptPreview(script: string): { shown: string[]; lines: number } {
  const lines = script.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return { shown: lines.slice(0, PREVIEW_LINES).map(previewLine), lines: lines.length };
}

/**
 * The body of the `P` line the helper sends once the shell is asking: `RUNID DIGEST BYTES LINES
 * PREVIEW[CLIENT_SEPARATOR CLIENT][INPUT_SEPARATOR INPUT]`, where PREVIEW is the first lines of the
 * script, escaped, joined by PREVIEW_SEPARATOR, CLIENT who asked (escaped, cut), when the client
 * named itself, and INPUT the line about the run's input (inputNote), when it takes input.
 */
export function previewFields(d: RunDetails): string {
  const { shown, lines } = scriptPreview(d.script);
  const who = d.client ? `${CLIENT_SEPARATOR}${previewLine(d.client)}` : '';
  const input = d.input ? `${INPUT_SEPARATOR}${inputNote(d.input)}` : '';
  return `${d.runId} ${d.digest} ${Buffer.byteLength(d.script, 'utf8')} ${lines} ${shown.join(PREVIEW_SEPARATOR)}${who}${input}`;
}

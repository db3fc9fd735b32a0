// Where a command writes, whether it may use colour, and aligned tables.
import { escapeControls } from '../../broker/escape.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Colour is allowed: stdout is a terminal and NO_COLOR is unset. */
  color: boolean;
  env: NodeJS.ProcessEnv;
}

/** The process's own streams and environment. */
export function processIo(): Io {
  const env = process.env;
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    color: process.stdout.isTTY === true && !env.NO_COLOR && env.TERM !== 'dumb',
    env,
  };
}

export type Color = 'red' | 'green' | 'yellow' | 'cyan' | 'dim' | 'bold';
const CODES: Record<Color, string> = { red: '31', green: '32', yellow: '33', cyan: '36', dim: '2', bold: '1' };

/** `text` in `color` when colour is on; the text is not escaped here. */
export function paint(io: Io, color: Color | undefined, text: string): string {
  return io.color && color ? `\x1b[${CODES[color]}m${text}\x1b[0m` : text;
}

/** A table cell: its text (escaped when printed) and an optional colour. */
export type Cell = string | { text: string; color?: Color };

/**
 * Aligned columns, two spaces apart, the last one not padded. Every cell is escaped first, so
 * outside data cannot carry control sequences; widths count the escaped text. `widths`
 * (at least these) keeps columns steady when more rows follow later (log --follow).
 */
export function formatRows(io: Io, rows: Cell[][], widths?: number[]): { lines: string[]; widths: number[] } {
  const norm = rows.map((r) =>
    r.map((c) => (typeof c === 'string' ? { text: escapeControls(c) } : { ...c, text: escapeControls(c.text) })),
  );
  const w = [...(widths ?? [])];
  for (const r of norm) r.forEach((c, i) => (w[i] = Math.max(w[i] ?? 0, [...c.text].length)));
  const lines = norm.map((r) =>
    r
      .map((c, i) => {
        const pad = i === r.length - 1 ? '' : ' '.repeat(Math.max(0, (w[i] ?? 0) - [...c.text].length));
        return paint(io, c.color, c.text) + pad;
      })
      .join('  ')
      .trimEnd(),
  );
  return { lines, widths: w };
}

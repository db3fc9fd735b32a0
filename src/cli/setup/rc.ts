// The block `tmux-run setup` adds to a shell's start-up file (~/.zshrc, ~/.bashrc, fish's
// conf.d/tmux-run.fish): found by its marker lines, added once, removed exactly. Pure functions
// of the file's text and the shell (src/cli/common/shells.ts); setup.ts reads and writes the file.
import type { Shell } from '../common/shells.js';

/** The first and last line of the block; a line is ours when it starts with these. */
export const BLOCK_BEGIN = '# >>> tmux-run setup';
export const BLOCK_END = '# <<< tmux-run setup';
const beginLine = (shell: Shell): string =>
  `${BLOCK_BEGIN} (enrolls every ${shell.name} inside tmux; 'tmux-run setup --undo' removes this block)`;

/** The block for `line` (the line `tmux-run snippet` prints for the start-up file), newline-terminated. */
export const rcBlock = (shell: Shell, line: string): string => `${beginLine(shell)}\n${line}\n${BLOCK_END}\n`;

interface Block {
  /** Line indexes of the begin and end markers. */
  begin: number;
  end: number;
}

/** A line outside comments that sources some tmux-run snippet of this shell, and the path it names. */
export interface SourceLine {
  /** 1-based, as an editor shows it. */
  line: number;
  path: string;
}

/** `source PATH` or `. PATH` naming a tmux-run.<shell> file, quoted or not. */
const sourceRe = (shell: Shell): RegExp => {
  const file = `tmux-run\\.${shell.name}`;
  return new RegExp(
    `(?:^|[\\s;&|({])(?:source|\\.)\\s+(?:'([^']*${file})'|"([^"]*${file})"|([^\\s'";&|)]*${file}))(?=$|[\\s;&|)])`,
  );
};

/** The marked block, undefined when there is none; throws when a marker has no partner. */
function findBlock(lines: string[]): Block | undefined {
  const begin = lines.findIndex((l) => l.startsWith(BLOCK_BEGIN));
  const end = lines.findIndex((l) => l.startsWith(BLOCK_END));
  if (begin < 0 && end < 0) return undefined;
  if (begin >= 0 && end < 0)
    throw new RcEditedError(`a '${BLOCK_BEGIN}' line (line ${begin + 1}) without its end line`);
  if (begin < 0 || end < begin)
    throw new RcEditedError(`a '${BLOCK_END}' line (line ${end + 1}) without its '${BLOCK_BEGIN}' line before it`);
  return { begin, end };
}

/** The file's lines that source a tmux-run snippet of `shell`, outside the marked block and outside comments. */
export function findSourceLines(shell: Shell, text: string): SourceLine[] {
  const lines = text.split('\n');
  const block = findBlock(lines);
  const re = sourceRe(shell);
  const found: SourceLine[] = [];
  lines.forEach((l, i) => {
    if (block && i >= block.begin && i <= block.end) return;
    if (l.trimStart().startsWith('#')) return;
    const m = re.exec(l);
    if (m) found.push({ line: i + 1, path: (m[1] ?? m[2] ?? m[3])! });
  });
  return found;
}

/** The block was changed by hand (or half removed): setup leaves such a file alone. */
export class RcEditedError extends Error {}

export type AddResult =
  | { status: 'added' | 'updated' | 'present'; text: string }
  /** The person's own line already sources a snippet: `path` (this one or another install's). */
  | { status: 'unmarked' | 'other_install'; text: string; line: number; path: string };

/** `text` with the block for `line` (sourcing `snippet`): added, refreshed, or left as it is. */
export function addBlock(shell: Shell, text: string, line: string, snippet: string): AddResult {
  const lines = text.split('\n');
  const block = findBlock(lines);
  if (block) {
    const inner = lines.slice(block.begin + 1, block.end);
    if (inner.length === 1 && inner[0] === line) return { status: 'present', text };
    checkInner(shell, inner, block);
    lines.splice(block.begin + 1, inner.length, line);
    return { status: 'updated', text: lines.join('\n') };
  }
  const own = findSourceLines(shell, text)[0];
  if (own) return { status: own.path === snippet ? 'unmarked' : 'other_install', text, ...own };
  const sep = text === '' || text.endsWith('\n') ? '' : '\n';
  return { status: 'added', text: text + sep + rcBlock(shell, line) };
}

/** Only a block holding exactly one line of the shape `shell.rcLine` gives (any install's path) is still ours. */
function checkInner(shell: Shell, inner: string[], block: Block): void {
  const [head, tail] = shell.rcLine('\0').split(shell.quote('\0'));
  const ours =
    inner.length === 1 &&
    inner[0]!.startsWith(head!) &&
    inner[0]!.endsWith(tail!) &&
    new RegExp(`tmux-run\\.${shell.name}'?$`).test(inner[0]!.slice(0, inner[0]!.length - tail!.length));
  if (!ours) {
    throw new RcEditedError(
      `the tmux-run block (lines ${block.begin + 1}-${block.end + 1}) was edited; change or remove it by hand`,
    );
  }
}

export type RemoveResult = { status: 'removed' | 'absent'; text: string };

/** `text` without the block `addBlock` added (exactly its lines); throws when it was edited. */
export function removeBlock(shell: Shell, text: string): RemoveResult {
  const lines = text.split('\n');
  const block = findBlock(lines);
  if (!block) return { status: 'absent', text };
  checkInner(shell, lines.slice(block.begin + 1, block.end), block);
  lines.splice(block.begin, block.end - block.begin + 1);
  return { status: 'removed', text: lines.join('\n') };
}

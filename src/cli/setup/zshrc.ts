// The block `tmux-run setup` adds to .zshrc: found by its marker lines, added once, removed
// exactly. Pure functions of the file's text; setup.ts reads and writes the file.
import { join } from 'node:path';

/** The first and last line of the block; a line is ours when it starts with these. */
export const BLOCK_BEGIN = '# >>> tmux-run setup';
export const BLOCK_END = '# <<< tmux-run setup';
const BEGIN_LINE = `${BLOCK_BEGIN} (enrolls every zsh inside tmux; 'tmux-run setup --undo' removes this block)`;

/** The block for `line` (the line `tmux-run snippet` prints for .zshrc), newline-terminated. */
export const zshrcBlock = (line: string): string => `${BEGIN_LINE}\n${line}\n${BLOCK_END}\n`;

/** The file zsh reads: $ZDOTDIR/.zshrc when ZDOTDIR is set, else ~/.zshrc. */
export const zshrcPath = (env: NodeJS.ProcessEnv, home: string): string => join(env.ZDOTDIR || home, '.zshrc');

interface Block {
  /** Line indexes of the begin and end markers. */
  begin: number;
  end: number;
}

/** A line outside comments that sources some tmux-run.zsh, and the path it names. */
export interface SourceLine {
  /** 1-based, as an editor shows it. */
  line: number;
  path: string;
}

const SOURCE_RE =
  /(?:^|[\s;&|({])(?:source|\.)\s+(?:'([^']*tmux-run\.zsh)'|"([^"]*tmux-run\.zsh)"|([^\s'";&|)]*tmux-run\.zsh))(?=$|[\s;&|)])/;

/** The marked block, undefined when there is none; throws when a marker has no partner. */
function findBlock(lines: string[]): Block | undefined {
  const begin = lines.findIndex((l) => l.startsWith(BLOCK_BEGIN));
  const end = lines.findIndex((l) => l.startsWith(BLOCK_END));
  if (begin < 0 && end < 0) return undefined;
  if (begin >= 0 && end < 0)
    throw new ZshrcEditedError(`a '${BLOCK_BEGIN}' line (line ${begin + 1}) without its end line`);
  if (begin < 0 || end < begin)
    throw new ZshrcEditedError(`a '${BLOCK_END}' line (line ${end + 1}) without its '${BLOCK_BEGIN}' line before it`);
  return { begin, end };
}

/** The file's lines that source a tmux-run.zsh, outside the marked block and outside comments. */
export function findSourceLines(text: string): SourceLine[] {
  const lines = text.split('\n');
  const block = findBlock(lines);
  const found: SourceLine[] = [];
  lines.forEach((l, i) => {
    if (block && i >= block.begin && i <= block.end) return;
    if (l.trimStart().startsWith('#')) return;
    const m = SOURCE_RE.exec(l);
    if (m) found.push({ line: i + 1, path: (m[1] ?? m[2] ?? m[3])! });
  });
  return found;
}

/** The block was changed by hand (or half removed): setup leaves such a file alone. */
export class ZshrcEditedError extends Error {}

export type AddResult =
  | { status: 'added' | 'updated' | 'present'; text: string }
  /** The person's own line already sources a snippet: `path` (this one or another install's). */
  | { status: 'unmarked' | 'other_install'; text: string; line: number; path: string };

/** `text` with the block for `line` (sourcing `snippet`): added, refreshed, or left as it is. */
export function addBlock(text: string, line: string, snippet: string): AddResult {
  const lines = text.split('\n');
  const block = findBlock(lines);
  if (block) {
    const inner = lines.slice(block.begin + 1, block.end);
    if (inner.length === 1 && inner[0] === line) return { status: 'present', text };
    checkInner(inner, block);
    lines.splice(block.begin + 1, inner.length, line);
    return { status: 'updated', text: lines.join('\n') };
  }
  const own = findSourceLines(text)[0];
  if (own) return { status: own.path === snippet ? 'unmarked' : 'other_install', text, ...own };
  const sep = text === '' || text.endsWith('\n') ? '' : '\n';
  return { status: 'added', text: text + sep + zshrcBlock(line) };
}

/** Only a block holding exactly one line that sources a tmux-run.zsh is still ours. */
function checkInner(inner: string[], block: Block): void {
  if (inner.length !== 1 || !/^\[\[ -n \$TMUX \]\] && source \S.*tmux-run\.zsh'?$/.test(inner[0]!)) {
    throw new ZshrcEditedError(
      `the tmux-run block (lines ${block.begin + 1}-${block.end + 1}) was edited; change or remove it by hand`,
    );
  }
}

export type RemoveResult = { status: 'removed' | 'absent'; text: string };

/** `text` without the block `addBlock` added (exactly its lines); throws when it was edited. */
export function removeBlock(text: string): RemoveResult {
  const lines = text.split('\n');
  const block = findBlock(lines);
  if (!block) return { status: 'absent', text };
  checkInner(lines.slice(block.begin + 1, block.end), block);
  lines.splice(block.begin, block.end - block.begin + 1);
  return { status: 'removed', text: lines.join('\n') };
}

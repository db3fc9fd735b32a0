// Read-only questions to tmux. Only `list-panes`, `display-message` and `capture-pane -p` (printed,
// never saved to a buffer) are ever asked; nothing is typed or pasted. Arguments come from
// enrollment records, never from an agent's input.
import { execFile } from 'node:child_process';

const READ_ONLY = new Set(['list-panes', 'display-message', 'capture-pane']);

/** The first command of `args`, or of a `;`-separated sequence, that is not a read-only question. */
export function notReadOnly(args: readonly string[]): string | undefined {
  let start = 0;
  for (let i = 0; i <= args.length; i++) {
    if (i < args.length && args[i] !== ';') continue;
    const command = args[start];
    const rest = args.slice(start + 1, i);
    if (command === undefined || !READ_ONLY.has(command)) return String(command);
    if (command === 'capture-pane' && !rest.includes('-p')) return 'capture-pane without -p';
    start = i + 1;
  }
  return undefined;
}

/** Throws, naming it, when `args` hold a command that is not a read-only question (the one refusal of every tmux call). */
export function assertReadOnly(args: readonly string[]): void {
  const command = notReadOnly(args);
  if (command !== undefined)
    throw new Error(`refusing to run tmux command ${command}: only read-only queries are allowed`);
}

/** Runs `tmux -S SOCKET COMMAND ...` for read-only commands (`;` between them); resolves stdout. */
export async function tmuxQuery(socket: string, args: string[], timeoutMs = 5000): Promise<string> {
  assertReadOnly(args);
  return new Promise((resolve, reject) => {
    execFile(
      process.env.TMUX_RUN_TMUX || 'tmux',
      ['-S', socket, ...args],
      { timeout: timeoutMs, maxBuffer: 4 << 20 },
      (e, out, err) => {
        if (!e) return resolve(out);
        // tmux's own one-line complaint ("can't find pane: %9") says more than "Command failed".
        const said = String(err ?? '')
          .trim()
          .split('\n')[0];
        const why = said || (e.killed ? `tmux did not answer within ${timeoutMs} ms` : e.message.split('\n')[0]);
        reject(new Error(why, { cause: e }));
      },
    );
  });
}

/** What a listing needs of a pane (src/broker/registry.ts): nothing that costs tmux a look at /proc. */
export interface TmuxPane {
  pane_id: string;
  server_pid: number;
  pane_tty: string;
  session: string;
  window_index: number;
  window_name: string;
}

// Fields are separated by spaces; the free-text ones are escaped by tmux (q:), so an escaped space
// is part of a field. (Control characters cannot separate fields: tmux rewrites them without a UTF-8 locale.)
// No pane_current_path: tmux reads each pane's foreground process's cwd for it, a cost per pane.
const FORMAT = [
  '#{pane_id}',
  '#{pid}',
  '#{q:pane_tty}',
  '#{window_index}',
  '#{q:session_name}',
  '#{q:window_name}',
].join(' ');

/** Splits a line on unescaped spaces and removes tmux's backslash escapes (pure). */
export function splitEscaped(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) cur += line[++i];
    else if (c === ' ') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/** Parses one line of list-panes output in FORMAT (pure; exported for tests). */
export function parsePaneLine(line: string): TmuxPane | undefined {
  const f = splitEscaped(line);
  if (f.length !== 6 || !/^%[0-9]+$/.test(f[0] ?? '')) return undefined;
  return {
    pane_id: f[0]!,
    server_pid: Number(f[1]),
    pane_tty: f[2] ?? '',
    window_index: Number(f[3]),
    session: f[4] ?? '',
    window_name: f[5] ?? '',
  };
}

/** Every pane of the server at `socket`; undefined when no server answers there. */
export async function listPanes(socket: string): Promise<Map<string, TmuxPane> | undefined> {
  let out: string;
  try {
    out = await tmuxQuery(socket, ['list-panes', '-a', '-F', FORMAT]);
  } catch {
    return undefined;
  }
  const panes = new Map<string, TmuxPane>();
  for (const line of out.split('\n')) {
    const p = parsePaneLine(line);
    if (p) panes.set(p.pane_id, p);
  }
  return panes;
}

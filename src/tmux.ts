// Read-only questions to tmux. Only `list-panes` and `display-message` are ever asked; nothing
// is typed or pasted. Arguments come from enrollment records, never from an agent's input.
import { execFile } from 'node:child_process';

const READ_ONLY = new Set(['list-panes', 'display-message']);

/** Runs `tmux -S SOCKET COMMAND ...` for a read-only command; resolves stdout. */
export function tmuxQuery(socket: string, args: string[], timeoutMs = 5000): Promise<string> {
  const command = args[0];
  if (command === undefined || !READ_ONLY.has(command)) {
    return Promise.reject(new Error(`refusing to run tmux command ${String(command)}: only read-only queries are allowed`));
  }
  return new Promise((resolve, reject) => {
    execFile(process.env.TMUX_RUN_TMUX || 'tmux', ['-S', socket, ...args], { timeout: timeoutMs, maxBuffer: 4 << 20 }, (e, out) =>
      e ? reject(e) : resolve(out),
    );
  });
}

export interface TmuxPane {
  pane_id: string;
  server_pid: number;
  pane_pid: number;
  pane_tty: string;
  session: string;
  window_index: number;
  window_name: string;
  pane_title: string;
  pane_current_path: string;
}

const FORMAT = ['#{pane_id}', '#{pid}', '#{pane_pid}', '#{pane_tty}', '#{window_index}', '#{q:session_name}', '#{q:window_name}', '#{q:pane_title}', '#{q:pane_current_path}'].join('\x1f');

/** Parses one line of list-panes output in FORMAT (pure; exported for tests). */
export function parsePaneLine(line: string): TmuxPane | undefined {
  const f = line.split('\x1f');
  if (f.length !== 9 || !/^%[0-9]+$/.test(f[0] ?? '')) return undefined;
  const unq = (s: string | undefined): string => (s ?? '').replace(/\\(.)/g, '$1');
  return {
    pane_id: f[0]!,
    server_pid: Number(f[1]),
    pane_pid: Number(f[2]),
    pane_tty: f[3] ?? '',
    window_index: Number(f[4]),
    session: unq(f[5]),
    window_name: unq(f[6]),
    pane_title: unq(f[7]),
    pane_current_path: unq(f[8]),
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

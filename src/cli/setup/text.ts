// What `tmux-run setup` prints for a person: one paragraph for the start-up file, one per client. Every
// outside string (paths, the entry) is escaped before colour is added, so colour is the only
// control sequence printed.
import { escapeControls } from '../../broker/escape.js';
import { paint, type Io } from '../common/output.js';
import type { ClientReport, RcReport } from './report.js';
import type { ServerEntry } from './entry.js';

/** `value` with every string in it passed through escapeControls. */
export function escaped<T>(value: T): T {
  if (typeof value === 'string') return escapeControls(value) as T;
  if (Array.isArray(value)) return value.map(escaped) as T;
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [escapeControls(k), escaped(v)])) as T;
  return value;
}

export function rcText(io: Io, r: RcReport, dry: boolean): string[] {
  const would = dry ? 'would be ' : '';
  const saved = r.backup ? ` (the previous file is in ${r.backup})` : '';
  const say: Record<string, string> = {
    added: `${r.file}: the tmux-run block ${would}added${saved}; new ${r.shell} shells inside tmux enroll their pane`,
    updated: `${r.file}: the tmux-run block ${would}updated to this install's snippet${saved}`,
    present: `${r.file}: already set up (the tmux-run block is there); nothing changed`,
    unmarked: `${r.file}: line ${r.existing?.line} already sources the snippet; nothing added`,
    other_install: `${r.file}: line ${r.existing?.line} sources another install's snippet (${r.existing?.path}); nothing added: change that line to the one below to use this install`,
    removed: `${r.file}: the tmux-run block ${would}removed${saved}`,
    absent: `${r.file}: no tmux-run block to remove; nothing changed`,
  };
  const out = [paint(io, r.status === 'other_install' ? 'yellow' : undefined, say[r.status] ?? r.status)];
  if (r.status !== 'removed' && r.status !== 'absent') out.push(`  ${r.line}`);
  return out;
}

export function serverText(s: ServerEntry): string[] {
  const env = Object.entries(s.env).map(([k, v]) => `${k}=${v}`);
  return [
    '',
    `The MCP server: ${[s.command, ...s.args].join(' ')}${env.length > 0 ? ` (environment: ${env.join(' ')})` : ''}`,
  ];
}

/** A client's report for the terminal: its snippet as lines. */
export type ClientText = Omit<ClientReport, 'snippet'> & { snippet: string[] };

export function printedText(io: Io, c: ClientText): string[] {
  const head = paint(io, 'bold', `${c.title} (${c.client})`);
  const snippet = c.snippet.map((l) => `    ${l}`);
  const write = `'tmux-run setup --write ${c.client}'`;
  if (c.command !== null)
    return [head, `  run:`, `    ${c.command}`, `  or run ${write} to add this to ${c.file}:`, ...snippet];
  return [head, `  add this to ${c.file} (or run ${write}):`, ...snippet];
}

export function writtenText(io: Io, c: ClientText, dry: boolean): string[] {
  const head = `${c.title} (${c.client}): ${c.file}`;
  if (c.status === 'error') return [`${head}: ${paint(io, 'red', 'not changed')}`];
  if (c.status === 'unchanged') return [`${head}: already set up; nothing changed`];
  const verb = `${dry ? 'would be ' : ''}${c.status === 'added' ? 'added' : 'updated'}`;
  const out = [
    `${head}: the tmux-run entry ${paint(io, 'green', verb)}${c.backup ? ` (the previous file is in ${c.backup})` : ''}`,
  ];
  if (c.rewritten)
    out.push(
      `  the file ${dry ? 'would be' : 'was'} written anew from its parsed values: its comments and layout are not kept`,
    );
  return out;
}

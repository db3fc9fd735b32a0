// What `tmux-run setup` did (or would, with --dry-run) to each file: the start-up file's block and
// each client's settings, as src/cli/setup.ts makes them, src/cli/setup/text.ts prints them and
// --json shows them.

/** What happened to one file (or would, with --dry-run). */
export interface FileReport {
  file: string;
  status: string;
  written: boolean;
  backup: string | null;
}

export interface RcReport extends FileReport {
  /** The shell whose start-up file this is. */
  shell: string;
  line: string;
  /** For `unmarked`/`other_install`: the person's own line that sources a snippet. */
  existing?: { line: number; path: string };
}

export interface ClientReport extends FileReport {
  client: string;
  title: string;
  format: 'json' | 'toml';
  entry: Record<string, unknown>;
  snippet: string;
  command: string | null;
  rewritten: boolean;
  error?: string;
}

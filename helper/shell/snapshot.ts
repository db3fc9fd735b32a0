// The snapshot a shell hands a run at dispatch: its cwd and exported environment (and the shell
// parameters the sandbox reads), written by the shell side as NUL-separated fields in a 0600 file
// of the channel. Every shell's snippet writes this one format; this module alone reads it (pure).

/**
 * What the shell reported at dispatch: its cwd and exported environment, and (`shell`) the shell
 * parameters the sandbox reads, exported or not: sent only when TMUX_RUN_SANDBOX is set and not `off`.
 */
export type Snapshot = { cwd: string; env: Record<string, string>; shell?: Record<string, string> };
/**
 * Parses the snapshot file: NONCE \0 PWD \0 NAME=VALUE \0 ..., where an entry `:NAME=VALUE` (no
 * parameter name starts with a colon) is a shell parameter for the sandbox, not an export (pure;
 * exported for tests).
 */
export function parseSnapshot(data: Buffer, nonce: string): Snapshot | undefined {
  const parts = data.toString('utf8').split('\0');
  if (parts[0] !== nonce || parts.length < 2) return undefined;
  const env: Record<string, string> = {};
  const shell: Record<string, string> = {};
  for (const kv of parts.slice(2)) {
    const eq = kv.indexOf('=');
    if (kv.startsWith(':')) {
      if (eq > 1) shell[kv.slice(1, eq)] = kv.slice(eq + 1);
      continue;
    }
    if (eq <= 0) continue;
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return { cwd: parts[1] ?? '', env, shell };
}

// The audit trail: one JSON object per line, 0600, never script text or output.
import { closeSync, constants, fstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { homedir } from 'node:os';
import type { ErrorCode } from '../protocol/errors.js';

/**
 * $TMUX_RUN_AUDIT when set (docs/configuration.md), else $XDG_STATE_HOME/tmux-run/audit.jsonl,
 * default ~/.local/state/tmux-run/audit.jsonl. A relative
 * XDG_STATE_HOME is ignored, as the XDG spec says: the helper, the server and the CLI run in
 * different directories and would each write a trail of their own.
 */
export function auditPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TMUX_RUN_AUDIT) return env.TMUX_RUN_AUDIT;
  const xdg = env.XDG_STATE_HOME;
  const state = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'state');
  return join(state, 'tmux-run', 'audit.jsonl');
}

/** The audit trail could not be written; a run is refused rather than run unrecorded. */
export class AuditError extends Error {
  readonly code = 'audit_unavailable' satisfies ErrorCode;
}

/** One line of the trail; `client` is who asked (src/core/protocol/client.ts), when the MCP client named itself. */
export type AuditEntry = Record<string, unknown> & { run_id: string; outcome: string; client?: string };

/** Appends entries; `append` throws AuditError when the line could not be written whole. */
export class AuditLog {
  private dirReady = false;
  constructor(readonly path: string) {}

  append(entry: AuditEntry): void {
    const line = JSON.stringify({ time: new Date().toISOString(), ...entry }) + '\n';
    let fd: number | undefined;
    try {
      if (!this.dirReady) {
        mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
        this.dirReady = true;
      }
      fd = openSync(
        this.path,
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
        0o600,
      );
      const st = fstatSync(fd);
      if (!st.isFile() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) {
        throw new Error(`${this.path} must be a regular file owned by you with mode 0600`);
      }
      const buf = Buffer.from(line);
      const n = writeSync(fd, buf);
      if (n !== buf.length) throw new Error(`short write (${n} of ${buf.length} bytes)`);
    } catch (e) {
      this.dirReady = false;
      throw new AuditError(`cannot write the audit trail ${this.path}: ${(e as Error).message}`, { cause: e });
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Appends, reporting a failure on stderr instead of throwing (for outcomes after the fact). */
  tryAppend(entry: AuditEntry): boolean {
    try {
      this.append(entry);
      return true;
    } catch (e) {
      process.stderr.write(`tmux-run: ${(e as Error).message}\n`);
      return false;
    }
  }
}

// The far end's audit trail (docs/remote.md, "The audit trail"): each entry is written to the remote
// user's own trail first, as any helper writes it (a start entry that cannot be written there refuses
// the run rather than run it unrecorded), then sent over the control link to the local relay, which
// appends it to the person's trail here with the host (src/remote/relay-audit.ts). Entries are
// sent a moment later (FAR_AUDIT_DELAY_MS, together), so that a run's reply is not queued behind
// them in the ssh session. An entry written while the link is down stays in the far end's trail only.
import { AuditLog, type AuditEntry } from '../../src/core/audit/audit-log.js';
import type { Transport } from '../../src/core/protocol/transport.js';
import type { FarMessage } from '../../src/core/enrollment/remote-link.js';

/** How long the far end holds its entries before it sends them, together. */
export const FAR_AUDIT_DELAY_MS = 25;

export class FarAuditLog extends AuditLog {
  private pending: AuditEntry[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    path: string,
    private readonly control: Transport,
  ) {
    super(path);
  }

  /** Written here (throws AuditError when it cannot be), then sent to the local trail. */
  override append(entry: AuditEntry): void {
    super.append(entry);
    this.send(entry);
  }

  /** An outcome after the fact: sent to the local trail even when this host's trail cannot take it. */
  override tryAppend(entry: AuditEntry): boolean {
    let written = false;
    try {
      super.append(entry);
      written = true;
    } catch (e) {
      process.stderr.write(`tmux-run: ${(e as Error).message}\n`);
    }
    this.send(entry);
    return written;
  }

  private send(entry: AuditEntry): void {
    this.pending.push(entry);
    this.timer ??= setTimeout(() => this.flush(), FAR_AUDIT_DELAY_MS);
  }

  /** Sends what is pending now (also before the control link is closed). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const entry of this.pending.splice(0)) {
      try {
        this.control.send({ type: 'audit', entry } satisfies FarMessage);
      } catch {
        /* the link is gone: the entry is in this host's trail (when it could be written) */
      }
    }
  }
}

// What the helper (helper/helper.ts) gives its service, and through it the queue and the modules
// that serve requests: the enrollment, its secret, the shell, the audit trail, the run journal, and
// where to say the pane's run state. Each module takes the part it needs.
import type { RunJournal } from '../../src/core/enrollment/run-journal.js';
import type { AuditLog } from '../../src/core/audit/audit-log.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import type { PaneStatus } from '../../src/core/enrollment/pane-status.js';
import type { Shell } from '../shell/shell.js';

export interface ServiceDeps {
  record: EnrollmentRecord;
  secret: Buffer;
  shell: Pick<Shell, 'ask' | 'notify' | 'revoked' | 'mode'> & Partial<Pick<Shell, 'sandbox' | 'afterRun'>>;
  audit: AuditLog;
  /** Where the helper notes runs before and after it spawns them (src/core/enrollment/run-journal.ts). */
  journal: Pick<RunJournal, 'note' | 'tryNote'>;
  /** The helper's log (stderr). */
  log: (message: string) => void;
  /** Called when the enrollment must end (revoked). */
  onRevoke: () => void;
  /** Live check of the shell and the tmux server this enrollment belongs to. */
  alive: () => boolean;
  /** Told the pane's run state whenever it may have changed (helper/status.ts publishes it). */
  status?: (s: Pick<PaneStatus, 'run' | 'queued' | 'admitted'>) => void;
}

/** Who may ask: the enrollment and its secret, that every request is checked against (authorize.ts). */
export type Enrollment = Pick<ServiceDeps, 'record' | 'secret'>;

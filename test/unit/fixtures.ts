// A stand-in enrollment for unit tests that drive the helper's service or the broker's lookup
// without tmux or zsh: a record naming this process as shell and helper, and runs bound to it.
import { join } from 'node:path';
import { HelperService } from '../../helper/service.js';
import type { Shell } from '../../helper/shell/shell.js';
import { AuditLog } from '../../src/core/audit/audit-log.js';
import type { EnrollmentRecord } from '../../src/core/enrollment/record.js';
import { RunJournal } from '../../src/core/enrollment/run-journal.js';
import { freshId, scriptDigest } from '../../src/core/enrollment/generation.js';
import { signBinding, type Binding } from '../../src/core/protocol/token.js';

/** A record with fixed generations (override any field); its secret is `secret` in hex. */
export function fakeRecord(secret: Buffer, over: Partial<EnrollmentRecord> = {}): EnrollmentRecord {
  return {
    version: 1,
    pane_id: '%7',
    generation: 'e'.repeat(32),
    server_generation: '1.2.srv',
    process_generation: 'a'.repeat(32),
    enrollment_generation: 'b'.repeat(32),
    tmux_socket: '/nonexistent',
    tmux_server_pid: 1,
    shell_pid: process.pid,
    shell_start: '0',
    shell_tty: '/dev/null',
    helper_pid: process.pid,
    socket: '/nonexistent',
    channel: '/nonexistent',
    enrolled_at: new Date().toISOString(),
    secret: secret.toString('hex'),
    ...over,
  };
}

/** A binding of `script` to `record`'s generations, issued now with the default limits. */
export function bindingFor(record: EnrollmentRecord, script: string, over: Partial<Binding> = {}): Binding {
  return {
    run_id: freshId(),
    script_digest: scriptDigest(script),
    server_generation: record.server_generation,
    pane_id: record.pane_id,
    enrollment_generation: record.enrollment_generation,
    process_generation: record.process_generation,
    stdout_limit: 65536,
    stderr_limit: 65536,
    issued_at: Date.now(),
    ...over,
  };
}

/** A signed `run` request for `script`, as the broker sends it. */
export function runRequest(record: EnrollmentRecord, secret: Buffer, script: string, b = bindingFor(record, script)) {
  return { type: 'run' as const, binding: b, token: signBinding(secret, b), script, progress: false };
}

/** The helper's service for `record`, with a stand-in shell that answers `ask` and draws nothing; files in `dir`. */
export function standInService(
  dir: string,
  record: EnrollmentRecord,
  secret: Buffer,
  ask: Shell['ask'],
): HelperService {
  return new HelperService({
    record,
    secret,
    shell: { ask, notify: () => {}, revoked: () => {}, mode: 'auto' },
    audit: new AuditLog(join(dir, 'audit.jsonl')),
    onRevoke: () => {},
    alive: () => true,
    journal: new RunJournal(join(dir, 'journal.runs')),
    log: () => {},
  });
}

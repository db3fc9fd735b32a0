// Where the audit trail is: one file whichever process asks (helper, server, CLI).
import { describe, expect, it } from 'vitest';
import { auditPath } from '../../src/core/audit/audit-log.js';

describe('auditPath', () => {
  it('is under an absolute XDG_STATE_HOME, else under ~/.local/state', () => {
    expect(auditPath({ HOME: '/home/u', XDG_STATE_HOME: '/srv/state' })).toBe('/srv/state/tmux-run/audit.jsonl');
    expect(auditPath({ HOME: '/home/u' })).toBe('/home/u/.local/state/tmux-run/audit.jsonl');
    expect(auditPath({ HOME: '/home/u', XDG_STATE_HOME: '' })).toBe('/home/u/.local/state/tmux-run/audit.jsonl');
  });

  it('ignores a relative XDG_STATE_HOME (each process would resolve it in its own directory)', () => {
    expect(auditPath({ HOME: '/home/u', XDG_STATE_HOME: 'state' })).toBe('/home/u/.local/state/tmux-run/audit.jsonl');
    expect(auditPath({ HOME: '/home/u', XDG_STATE_HOME: './s' })).toBe('/home/u/.local/state/tmux-run/audit.jsonl');
  });
});

// `tmux-run doctor`: healthy setups pass; an open registry directory or audit trail fails, named.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { sandbox, type Sandbox } from './support.js';

let box: Sandbox;
beforeEach(() => {
  box = sandbox();
});
afterEach(() => box.remove());

interface Check {
  check: string;
  ok: boolean;
  detail: string;
  fix: string | null;
}

describe('tmux-run doctor', () => {
  it('passes every check in a healthy setup', async () => {
    const r = await runCli(['doctor'], box.env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual([
      'ok node',
      'ok tmux',
      'ok zsh',
      'ok registry',
      'ok helper',
      'ok audit',
      'ok enrollments',
    ]);
    const json = await runCli(['doctor', '--json'], box.env);
    expect(json.code).toBe(0);
    const checks = JSON.parse(json.stdout) as Check[];
    expect(checks.map((c) => c.check)).toEqual(['node', 'tmux', 'zsh', 'registry', 'helper', 'audit', 'enrollments']);
    for (const c of checks) expect(c).toEqual({ check: c.check, ok: true, detail: expect.any(String), fix: null });
  });

  it('accepts a registry directory that does not exist yet', async () => {
    const r = await runCli(['doctor'], { ...box.env, TMUX_RUN_DIR: join(box.dir, 'not-yet') });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok\s+registry\s+.*will be created on first enrollment$/m);
  });

  it('fails when TMUX_RUN_DIR is open to others, naming the check and the fix', async () => {
    chmodSync(box.registryDir, 0o777);
    const r = await runCli(['doctor'], box.env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL\s+registry\s+.*open to other users \(mode 777\); fix: chmod 700 /m);
    expect(r.stdout).toMatch(/^ok\s+node/m);
    expect(r.stderr).toBe('tmux-run: doctor: 1 check failed (registry)\n');
    const json = await runCli(['doctor', '--json'], box.env);
    expect(json.code).toBe(1);
    const failed = (JSON.parse(json.stdout) as Check[]).filter((c) => !c.ok);
    expect(failed).toEqual([
      {
        check: 'registry',
        ok: false,
        detail: expect.stringContaining('mode 777'),
        fix: `chmod 700 ${box.registryDir}`,
      },
    ]);
  });

  it('fails when the audit trail is readable by others', async () => {
    mkdirSync(join(box.stateDir, 'tmux-run'), { mode: 0o700 });
    const trail = join(box.stateDir, 'tmux-run', 'audit.jsonl');
    writeFileSync(trail, '');
    chmodSync(trail, 0o644);
    const r = await runCli(['doctor'], box.env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL\s+audit\s+.*mode 644.*fix: chmod 600 /m);
  });

  it('fails when tmux or zsh is missing from PATH', async () => {
    const r = await runCli(['doctor', '--json'], { ...box.env, PATH: join(box.dir, 'empty-bin') });
    expect(r.code).toBe(1);
    const failed = (JSON.parse(r.stdout) as Check[]).filter((c) => !c.ok).map((c) => c.check);
    expect(failed).toEqual(['tmux', 'zsh']);
  });
});

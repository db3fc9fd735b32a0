// `tmux-run doctor`: healthy setups pass; an open registry directory or audit trail fails, named.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../lab/cli.js';
import { sandbox, type Sandbox } from './support.js';

/** The program's path on this machine's PATH. */
const which = (name: string): string =>
  spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();

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
      'ok bash',
      'ok fish',
      'ok bash-builtin',
      'ok registry',
      'ok helper',
      'ok audit',
      'ok enrollments',
      'ok sandbox',
      'ok hosts',
    ]);
    const json = await runCli(['doctor', '--json'], box.env);
    expect(json.code).toBe(0);
    const checks = JSON.parse(json.stdout) as Check[];
    expect(checks.map((c) => c.check)).toEqual([
      'node',
      'tmux',
      'zsh',
      'bash',
      'fish',
      'bash-builtin',
      'registry',
      'helper',
      'audit',
      'enrollments',
      'sandbox',
      'hosts',
    ]);
    for (const c of checks) expect(c).toEqual({ check: c.check, ok: true, detail: expect.any(String), fix: null });
  });

  it('says whether bash panes get the exact check (the builtin) or the screen check, and why', async () => {
    const line = async (env: Record<string, string>) =>
      (JSON.parse((await runCli(['doctor', '--json'], env)).stdout) as Check[]).find((c) => c.check === 'bash-builtin');
    expect(await line(box.env)).toMatchObject({ ok: true, detail: expect.stringMatching(/know their line exactly/) });
    const off = await runCli(['doctor'], { ...box.env, TMUX_RUN_NATIVE: 'off' });
    expect(off.code).toBe(0);
    expect(off.stdout).toMatch(/^warn\s+bash-builtin\s+bash panes use the screen check .*TMUX_RUN_NATIVE=off/m);
  });

  it('warns without failing when bwrap is missing, and fails when bwrap cannot make a sandbox', async () => {
    const missing = await runCli(['doctor', '--json'], { ...box.env, TMUX_RUN_BWRAP: join(box.dir, 'no-bwrap') });
    expect(missing.code).toBe(0);
    const warn = (JSON.parse(missing.stdout) as Check[]).find((c) => c.check === 'sandbox');
    expect(warn).toMatchObject({ ok: true, warning: true, fix: 'install bubblewrap (apt-get install bubblewrap)' });
    const text = await runCli(['doctor'], { ...box.env, TMUX_RUN_BWRAP: join(box.dir, 'no-bwrap') });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^warn\s+sandbox\s+.*runs in a pane with TMUX_RUN_SANDBOX set are refused/m);
    // An executable that makes no sandbox (as bwrap does when user namespaces are refused).
    const unable = await runCli(['doctor'], { ...box.env, TMUX_RUN_BWRAP: '/bin/false' });
    expect(unable.code).toBe(1);
    expect(unable.stdout).toMatch(/^FAIL\s+sandbox\s+\/bin\/false cannot make a sandbox here \(it exited 1\)/m);
    expect(unable.stderr).toBe('tmux-run: doctor: 1 check failed (sandbox)\n');
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

  it('fails when the audit trail is not writable (every run would be refused audit_unavailable)', async () => {
    // A 0400 trail passed as "a private file (0600, yours)" while each run was refused.
    mkdirSync(join(box.stateDir, 'tmux-run'), { mode: 0o700, recursive: true });
    const trail = join(box.stateDir, 'tmux-run', 'audit.jsonl');
    writeFileSync(trail, '');
    chmodSync(trail, 0o400);
    const r = await runCli(['doctor'], box.env);
    chmodSync(trail, 0o600);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL\s+audit\s+.*not writable \(mode 400\).*fix: chmod 600 /m);
    expect((await runCli(['doctor'], box.env)).stdout).toMatch(/^ok\s+audit\s+.*a private file \(0600, yours\)/m);
  });

  it('fails when tmux or every shell is missing from PATH', async () => {
    const r = await runCli(['doctor', '--json'], { ...box.env, PATH: join(box.dir, 'empty-bin') });
    expect(r.code).toBe(1);
    const failed = (JSON.parse(r.stdout) as Check[]).filter((c) => !c.ok);
    expect(failed.map((c) => c.check)).toEqual(['tmux', 'zsh', 'bash', 'fish']);
    expect(failed[3]).toMatchObject({
      detail: 'fish was not found on PATH: fish panes cannot enroll',
      fix: 'install one of zsh 5.9, bash 4.4, fish 3.4 (or newer): no shell here can enroll a pane',
    });
  });

  it('checks each shell it finds: a fish too old warns, an absent bash is said, neither fails', async () => {
    const bin = join(box.dir, 'bin');
    mkdirSync(bin);
    for (const p of ['tmux', 'zsh']) symlinkSync(which(p), join(bin, p));
    // A fish that says it is 3.3.1 (as `fish --version` prints it).
    writeFileSync(join(bin, 'fish'), '#!/bin/sh\necho "fish, version 3.3.1"\n', { mode: 0o755 });
    const r = await runCli(['doctor', '--json'], { ...box.env, PATH: bin });
    expect(r.code, r.stdout).toBe(0);
    const shells = (JSON.parse(r.stdout) as Check[]).filter((c) => ['zsh', 'bash', 'fish'].includes(c.check));
    expect(shells).toEqual([
      { check: 'zsh', ok: true, detail: expect.stringMatching(/^zsh 5\.\d+/), fix: null },
      { check: 'bash', ok: true, detail: 'bash was not found on PATH: bash panes cannot enroll', fix: null },
      {
        check: 'fish',
        ok: true,
        warning: true,
        detail: 'fish, version 3.3.1 is older than 3.4: fish panes cannot enroll',
        fix: 'install fish 3.4 or newer to enroll fish panes',
      },
    ]);
    const text = await runCli(['doctor'], { ...box.env, PATH: bin });
    expect(text.stdout).toMatch(/^warn\s+fish\s+fish, version 3\.3\.1 is older than 3\.4/m);
    expect(text.stdout).toMatch(/^ok\s+bash\s+bash was not found on PATH/m);
  });
});

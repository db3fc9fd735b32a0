// The directory shell/tmux-run.zsh picks for the registry is the one src/core/enrollment/layout.ts
// resolves: asked of the snippet's own _tmux_run_dir in a real zsh.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { resolveRegistryDir } from '../../src/core/enrollment/layout.js';
import { SNIPPET } from '../../lab/product.js';

const code = readFileSync(SNIPPET, 'utf8')
  .split('\n')
  .filter((l) => !/^\s*#/.test(l))
  .join('\n');

describe('shell/tmux-run.zsh agrees with src/core/enrollment/layout.ts', () => {
  it("picks the same directory as resolveRegistryDir, asked of the snippet's _tmux_run_dir", () => {
    const uid = process.getuid?.() ?? 0;
    const cases: NodeJS.ProcessEnv[] = [
      { TMUX_RUN_DIR: '/x/run dir', XDG_RUNTIME_DIR: '/y' },
      { XDG_RUNTIME_DIR: '/y/xdg' },
      { TMUX_RUN_DIR: '', XDG_RUNTIME_DIR: '/z' },
      {},
    ];
    for (const env of cases) {
      // Sourcing outside tmux refuses to enroll, but leaves its functions defined.
      const r = spawnSync(
        'zsh',
        ['-f', '-c', 'source "$1" 2>/dev/null; _tmux_run_dir; print -rn -- "$REPLY"', 'zsh', SNIPPET],
        { env: { PATH: process.env.PATH, HOME: '/nonexistent', ...env }, encoding: 'utf8' },
      );
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(resolveRegistryDir(env, uid));
    }
    // Both fallbacks without XDG_RUNTIME_DIR are written the same way.
    expect(code).toContain('REPLY=/run/user/$EUID/tmux-run');
    expect(code).toContain('REPLY=/tmp/tmux-run-$EUID');
    expect(resolveRegistryDir({}, 7, () => true)).toBe('/run/user/7/tmux-run');
    expect(resolveRegistryDir({}, 7, () => false)).toBe('/tmp/tmux-run-7');
  });
});

// doctor's `bash-builtin` line: whether bash panes get the exact line check (the builtin
// dist/generated/bash-line.so that shell/tmux-run.bash loads) or the screen check, and why.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD_ID } from '../core/protocol/build.js';
import { packageRoot } from '../core/os/package-root.js';

/** One of doctor's lines (its Check). */
type Line = { check: string; ok: boolean; detail: string; fix: string | null; warning?: true };

const NAME = 'bash-builtin';

/**
 * Loads the builtin in the bash on PATH, with the snippet's own checks (owner, mode, build), as
 * a pane would: ok when it loads; a warning otherwise (bash panes then use the screen check, with
 * no notices and no ask mode), saying why. Passes, said, when there is no bash.
 */
export function checkBashBuiltin(env: NodeJS.ProcessEnv): Line {
  const snippet = readFileSync(join(packageRoot(), 'shell', 'tmux-run.bash'), 'utf8');
  // The snippet's own loader, run alone (it defines functions and loads; enrolling needs tmux).
  const loader = /^_tmux_run_exact_load\(\) \{\n[\s\S]*?\n\}\n/m.exec(snippet)?.[0];
  if (loader === undefined)
    return { check: NAME, ok: false, detail: 'shell/tmux-run.bash has no loader', fix: 'reinstall tmux-run' };
  const script = [
    loader,
    `_tmux_run_root=${JSON.stringify(packageRoot())}`,
    'f=$(mktemp) && _tmux_run_exact_load "$f"; rm -f "$f"',
    '[[ -n $_tmux_run_exact ]] && echo exact || echo "screen $_tmux_run_exact_why"',
  ].join('\n');
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', script], {
    env,
    encoding: 'utf8',
    timeout: 5000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.error) return { check: NAME, ok: true, detail: 'bash was not found on PATH', fix: null };
  const out = r.stdout.trim();
  if (out === 'exact')
    return {
      check: NAME,
      ok: true,
      detail: `bash panes know their line exactly (build ${BUILD_ID}): notices and ask mode work there`,
      fix: null,
    };
  const why = out.startsWith('screen ') ? out.slice(7) : `the check could not run (${r.stderr.trim().slice(0, 200)})`;
  return {
    check: NAME,
    ok: true,
    warning: true,
    detail: `bash panes use the screen check (no notices, ask mode refuses): ${why}`,
    fix: 'install a C compiler and run npm run build in the tmux-run directory (see the reason)',
  };
}

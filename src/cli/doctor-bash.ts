// doctor's `bash-builtin` line: whether bash panes get the exact line check (the builtin
// dist/generated/bash-line.so that shell/tmux-run.bash loads once its helper has checked it) or
// the screen check, and why (the snippet's plan is in shell/tmux-run-start.bash).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD_ID } from '../core/protocol/build.js';
import { packageRoot } from '../core/os/package-root.js';
import { builtinRefusal } from '../core/enrollment/bash-builtin.js';

/** One of doctor's lines (its Check). */
type Line = { check: string; ok: boolean; detail: string; fix: string | null; warning?: true };

const NAME = 'bash-builtin';

/** A function of the snippet's, its text (`NAME() {` to the closing `}` at the line's start). */
function snippetFunction(text: string, name: string): string | undefined {
  return new RegExp(`^${name}\\(\\) \\{\\n[\\s\\S]*?\\n\\}\\n`, 'm').exec(text)?.[0];
}

/** The bash on PATH runs `lines`: what it printed, or undefined when there is no bash. */
function runBash(lines: string[], env: NodeJS.ProcessEnv): { out: string; err: string } | undefined {
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', lines.join('\n')], {
    env,
    encoding: 'utf8',
    timeout: 5000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return r.error ? undefined : { out: r.stdout.trim(), err: r.stderr.trim() };
}

/**
 * Checks the builtin as a pane would: the snippet's own plan (_tmux_run_exact_plan: not built,
 * a symlink, the build id), the helper's checks of its owner, mode and build
 * (src/core/enrollment/bash-builtin.ts), then the snippet's own load (_tmux_run_exact_now) in the bash
 * on PATH: ok when it loads; a warning otherwise (bash panes then use the screen check, with no
 * notices and no ask mode), saying why. Passes, said, when there is no bash.
 */
export function checkBashBuiltin(env: NodeJS.ProcessEnv): Line {
  const root = packageRoot();
  const start = readFileSync(join(root, 'shell', 'tmux-run-start.bash'), 'utf8');
  const serve = readFileSync(join(root, 'shell', 'tmux-run-serve.bash'), 'utf8');
  const plan = snippetFunction(start, '_tmux_run_exact_plan');
  const id = snippetFunction(start, '_tmux_run_build_id');
  const now = snippetFunction(serve, '_tmux_run_exact_now');
  if (plan === undefined || id === undefined || now === undefined)
    return { check: NAME, ok: false, detail: "the snippet's builtin loader is missing", fix: 'reinstall tmux-run' };
  const bash = (lines: string[]) => runBash(lines, env);
  const head = [
    plan,
    id,
    now,
    `_tmux_run_root=${JSON.stringify(root)}`,
    '_tmux_run_write_check() { :; }',
    '_tmux_run_exact_plan',
  ];
  const first = bash([
    ...head,
    'if [[ -n $_tmux_run_exact ]]; then echo exact; elif [[ -n $_tmux_run_exact_so ]]; then echo "load $_tmux_run_exact_so"',
    'else echo "screen $_tmux_run_exact_why"; fi',
  ]);
  if (first === undefined) return { check: NAME, ok: true, detail: 'bash was not found on PATH', fix: null };
  let out = first.out;
  let err = first.err;
  if (out.startsWith('load ')) {
    const refusal = builtinRefusal(out.slice(5));
    if (refusal !== undefined) out = `screen ${refusal}`;
    else {
      const second = bash([
        ...head,
        '_tmux_run_base=$(mktemp) && _tmux_run_exact_now; rm -f "$_tmux_run_base"',
        'if [[ -n $_tmux_run_exact ]]; then echo exact; else echo "screen ${_tmux_run_ended#L }"; fi',
      ]);
      out = second?.out ?? 'screen bash was not found on PATH';
      err = second?.err ?? '';
    }
  }
  if (out === 'exact')
    return {
      check: NAME,
      ok: true,
      detail: `bash panes know their line exactly (build ${BUILD_ID}): notices and ask mode work there`,
      fix: null,
    };
  const why = out.startsWith('screen ') ? out.slice(7) : `the check could not run (${err.slice(0, 200)})`;
  return {
    check: NAME,
    ok: true,
    warning: true,
    detail: `bash panes use the screen check (no notices, ask mode refuses): ${why}`,
    fix: 'install a C compiler and run npm run build in the tmux-run directory (see the reason)',
  };
}

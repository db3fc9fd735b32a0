// Which writable trees a sandbox may not have (pure): one that is or holds a home directory or
// $ZDOTDIR, or is, holds or lies in a hidden or read-only path, refused with what to do instead.
// Split from the policy: helper/walls/sandbox.ts asks it first, bwrap-args.ts again when it builds the walls.
import type { PathFact, Refusal, SandboxPlan } from './plan.js';

/** `p` is `root` or lies under it. */
export const within = (p: string, root: string): boolean =>
  p === root || p.startsWith(root.endsWith('/') ? root : root + '/');

/**
 * The refusals of the writable trees themselves (one that is or holds a home directory or
 * $ZDOTDIR, or is, holds or lies in a hidden or read-only path): they need only the paths' facts,
 * so the helper asks before it searches a tree for repositories (a cwd at / is refused at once).
 */
export function refuseWritable(plan: SandboxPlan, paths: ReadonlyMap<string, PathFact>): Refusal | undefined {
  const fact = (p: string): PathFact => paths.get(p) ?? { real: p, kind: 'missing' };
  for (const w of plan.writable) {
    const f = fact(w.path);
    if (f.kind === 'missing') continue;
    const why = writableRefusal(plan, w, f.real, fact);
    if (why) return { ok: false, message: why };
  }
  return undefined;
}

/** Why a writable tree may not be used, or undefined (pure). */
function writableRefusal(
  plan: SandboxPlan,
  w: SandboxPlan['writable'][number],
  root: string,
  fact: (p: string) => PathFact,
): string | undefined {
  const what =
    w.from === 'cwd'
      ? `TMUX_RUN_SANDBOX=${plan.value} would let the run write its current directory ${root}`
      : `TMUX_RUN_SANDBOX_WRITE names ${w.path}${w.path !== root ? ` (${root})` : ''}`;
  const fix =
    w.from === 'cwd' ? 'cd into a project directory, or use TMUX_RUN_SANDBOX=read-only' : 'remove it from the list';
  for (const h of plan.homes) {
    const real = fact(h).real;
    if (within(real, root)) {
      return `${what}, which is or holds ${h === real ? h : `${h} (${real})`}, a home directory or $ZDOTDIR (the shell's start-up files live there); ${fix}`;
    }
  }
  for (const [list, kind] of [
    [plan.hidden, 'hidden'],
    [plan.readOnly, 'read-only'],
  ] as const) {
    for (const p of list) {
      const real = fact(p).real;
      if (within(real, root) || within(root, real)) {
        const holds = within(real, root);
        // (A project directory can hold a hidden path the person listed: "cd into a project" would not help.)
        const here =
          w.from !== 'cwd'
            ? fix
            : holds
              ? `cd into a directory that does not hold it${kind === 'hidden' ? ' (or take it out of TMUX_RUN_SANDBOX_HIDE, if it is there)' : ''}, or use TMUX_RUN_SANDBOX=read-only`
              : 'cd out of it';
        return `${what}, which ${holds ? 'is or holds' : 'lies inside'} the ${kind} path ${p}; ${here}`;
      }
    }
  }
  return undefined;
}

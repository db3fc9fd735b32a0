// bwrap's argument list for a run (pure): the stage after the plan (helper/walls/policy.ts),
// once the facts are gathered at dispatch (helper/walls/facts.ts); a refusal that says what to
// do when the walls cannot hold. docs/sandbox.md says what they are.
import { dirname } from 'node:path';
import { processWalls } from '../../src/core/os/bwrap.js';
import type { PathFact, Refusal, SandboxFacts, SandboxPlan } from './plan.js';
import { refuseWritable, within } from './writable.js';

type FactOf = (p: string) => PathFact;
type RootOf = (p: string) => string | undefined;

/** The directories strictly below `root` down to and including `dir` (pure). */
export function dirsBetween(root: string, dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; d !== root && within(d, root) && d !== dirname(d); d = dirname(d)) out.unshift(d);
  return out;
}

const byDepth = (a: string, b: string): number => a.split('/').length - b.split('/').length || a.localeCompare(b);

/**
 * bwrap's arguments for the plan, up to (not including) `--` and the command (pure). In order:
 * the read-only root, /dev, /proc, a private /tmp; the writable trees; the directories pinned on
 * themselves from each writable tree down to every git directory found in it (a mount point cannot
 * be renamed or removed, so a parent cannot be moved away); the hidden paths (a directory gets an
 * empty read-only tmpfs, anything else /dev/null); the read-only paths; each git directory (and
 * gitlink file) in a writable tree, whole and read-only: its hooks, config, commondir, worktrees
 * and modules decide what git runs later, unconfined, and no entry can be added to it either;
 * then no capabilities and the namespaces (src/core/os/bwrap.ts processWalls).
 */
export function sandboxArgs(plan: SandboxPlan, facts: SandboxFacts): { ok: true; args: string[] } | Refusal {
  const fact: FactOf = (p) => facts.paths.get(p) ?? { real: p, kind: 'missing' };
  const refused = refuseTrees(plan, facts, fact);
  if (refused) return refused;
  const roots = writableRoots(plan, fact);
  const rootOf: RootOf = (p) => roots.filter((r) => within(p, r)).sort((a, b) => b.length - a.length)[0];
  const git = gitLocks(facts, rootOf);
  if (!git.ok) return git;
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  for (const r of [...new Set(roots)].sort(byDepth)) args.push('--bind', r, r);
  const cwd = fact(plan.cwd).real;
  if (within(cwd, '/tmp') && rootOf(cwd) === undefined) args.push('--ro-bind', cwd, cwd);
  for (const d of git.pins) args.push('--bind', d, d);
  args.push(...maskArgs(plan, fact));
  for (const l of git.locks) args.push(...l);
  args.push(...processWalls(plan.net), '--chdir', cwd);
  return { ok: true, args };
}

// Before any wall: a writable tree the sandbox may not have, a search for repositories that gave
// up (their hooks unlocked), or a writable tree that is or lies in a git directory.
function refuseTrees(plan: SandboxPlan, facts: SandboxFacts, fact: FactOf): Refusal | undefined {
  const refused = refuseWritable(plan, facts.paths);
  if (refused) return refused;
  if (facts.searchGaveUp !== undefined) {
    return {
      ok: false,
      message: `the writable tree is too big to search for git repositories (more than ${facts.searchGaveUp} directories) and their hooks could not be locked; cd into a smaller project directory, or use TMUX_RUN_SANDBOX=read-only`,
    };
  }
  for (const repo of facts.repos) {
    const inside = plan.writable.find((w) => within(fact(w.path).real, repo.dir));
    if (inside) {
      return {
        ok: false,
        message: `${inside.from === 'cwd' ? `TMUX_RUN_SANDBOX=${plan.value} would let the run write its current directory` : 'TMUX_RUN_SANDBOX_WRITE names'} ${inside.path}, which is or lies in the git directory ${repo.dir} (its hooks and config run later, unconfined); ${inside.from === 'cwd' ? 'cd into the work tree, or use TMUX_RUN_SANDBOX=read-only' : 'remove it from the list'}`,
      };
    }
  }
  return undefined;
}

// The writable trees' real paths, in the plan's order: a missing TMUX_RUN_SANDBOX_WRITE path grants nothing.
function writableRoots(plan: SandboxPlan, fact: FactOf): string[] {
  return plan.writable
    .map((w) => fact(w.path))
    .filter((f) => f.kind !== 'missing')
    .map((f) => f.real);
}

// Each gitlink file and git directory in a writable tree, read-only whole, and the directories
// from its tree down to it pinned; a `.git` symlink refuses (it could be replaced, not locked).
function gitLocks(facts: SandboxFacts, rootOf: RootOf): { ok: true; pins: string[]; locks: string[][] } | Refusal {
  const pins = new Set<string>();
  const locks: string[][] = [];
  for (const link of facts.gitLinks) {
    const root = rootOf(link.path);
    if (root === undefined) continue;
    if (link.symlink) {
      return {
        ok: false,
        message: `${link.path} is a symlink inside the writable tree and could be replaced; tmux-run cannot lock it (make it a directory or a gitlink file, or use TMUX_RUN_SANDBOX=read-only)`,
      };
    }
    for (const d of dirsBetween(root, dirname(link.path))) pins.add(d);
    locks.push(['--ro-bind', link.path, link.path]);
  }
  // Each git directory whole, read-only: hooks, config, commondir, worktrees, modules... are
  // what the person later runs unconfined; one nested in another is locked with it.
  const gitDirs = [...new Set(facts.repos.map((r) => r.dir))].sort(byDepth);
  const locked: string[] = [];
  for (const dir of gitDirs) {
    const root = rootOf(dir);
    if (root === undefined || locked.some((l) => within(dir, l))) continue; // read-only already
    locked.push(dir);
    for (const d of dirsBetween(root, dirname(dir))) pins.add(d);
    locks.push(['--ro-bind', dir, dir]);
  }
  return { ok: true, pins: [...pins].sort(byDepth), locks };
}

// The hidden paths (a directory gets an empty read-only tmpfs, anything else /dev/null), then the
// read-only ones; none twice, none under the private /tmp or inside a hidden directory.
function maskArgs(plan: SandboxPlan, fact: FactOf): string[] {
  const args: string[] = [];
  const hiddenDirs: string[] = [];
  const hidden = [...new Set(plan.hidden.map(fact).filter((f) => f.kind !== 'missing'))].sort((a, b) =>
    byDepth(a.real, b.real),
  );
  const seen = new Set<string>();
  for (const f of hidden) {
    // Under /tmp it is not there at all (the private /tmp); inside a hidden directory, hidden already.
    if (seen.has(f.real) || within(f.real, '/tmp') || hiddenDirs.some((d) => within(f.real, d))) continue;
    seen.add(f.real);
    if (f.kind === 'dir') {
      hiddenDirs.push(f.real);
      args.push('--tmpfs', f.real, '--remount-ro', f.real);
    } else args.push('--ro-bind', '/dev/null', f.real);
  }
  for (const p of plan.readOnly) {
    const f = fact(p);
    if (f.kind === 'missing' || within(f.real, '/tmp') || hiddenDirs.some((d) => within(f.real, d))) continue;
    if (seen.has(f.real)) continue;
    seen.add(f.real);
    args.push('--ro-bind', f.real, f.real);
  }
  return args;
}

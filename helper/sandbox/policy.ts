// The sandbox's walls as data (pure): from what the shell reported at the run (TMUX_RUN_SANDBOX,
// its lists, HOME and friends) and the facts gathered at dispatch (helper/sandbox-facts.ts) to
// either a refusal that says what to do or bwrap's argument list. DESIGN "Walls around a run".
import { dirname, isAbsolute, resolve } from 'node:path';
import { processWalls } from '../../src/os/bwrap.js';
import { refuseWritable, within } from './writable.js';
import {
  SANDBOX_VALUES,
  type PathFact,
  type Refusal,
  type SandboxFacts,
  type SandboxPlan,
  type SandboxShown,
  type SandboxValue,
  type ShellParams,
  type OwnFacts,
} from './plan.js';

/** Hidden by default under each home directory (TMUX_RUN_SANDBOX_HIDE replaces the list). */
export const DEFAULT_HIDDEN = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.config/gcloud',
  '.azure',
  '.kube',
  '.docker',
  '.netrc',
  '.config/gh',
  '.password-store',
  '.local/share/keyrings',
] as const;

// The sandbox's terms, passed on: importers of the policy find them here as before.
export * from './plan.js';
export { refuseWritable, within };

/** TMUX_RUN_SANDBOX as listings show it (pure). */
export function shownValue(raw: string | undefined): SandboxShown {
  if (raw === undefined || raw === '') return 'off';
  return (SANDBOX_VALUES as readonly string[]).includes(raw) ? (raw as SandboxValue) : 'invalid';
}

/** A colon-separated list (zsh arrays arrive joined by colons); undefined when the parameter is unset. */
function pathList(name: string, raw: string | undefined): string[] | Refusal | undefined {
  if (raw === undefined) return undefined;
  const list = raw.split(':').filter((p) => p !== '');
  const bad = list.find((p) => !isAbsolute(p));
  if (bad !== undefined) {
    return {
      ok: false,
      message: `${name} holds ${JSON.stringify(bad)}, which is not an absolute path; use absolute paths only`,
    };
  }
  return list.map((p) => resolve(p));
}

const isRefusal = (x: unknown): x is Refusal =>
  typeof x === 'object' && x !== null && (x as { ok?: unknown }).ok === false;

/** The paths of the sockets a D-Bus address names (`unix:path=...`; abstract ones need the network namespace). */
export function dbusSockets(address: string | undefined): string[] {
  if (!address) return [];
  return address
    .split(';')
    .map((a) => /^unix:(?:.*,)?path=([^,]+)/.exec(a)?.[1])
    .filter((p): p is string => p !== undefined && isAbsolute(p))
    .map((p) => p.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))));
}

/**
 * The plan for a run (pure): which trees are writable, which paths hidden or read-only, which may
 * never be writable; a refusal for an unknown value or a relative path in a list. `value` is the
 * shell's TMUX_RUN_SANDBOX, not empty and not `off`.
 */
export function planSandbox(
  shell: ShellParams,
  cwd: string,
  env: Readonly<Record<string, string>>,
  own: OwnFacts,
): { ok: true; plan: SandboxPlan } | Refusal {
  const value = shell.TMUX_RUN_SANDBOX ?? '';
  if (value === 'off' || value === '' || shownValue(value) === 'invalid') {
    return {
      ok: false,
      message: `TMUX_RUN_SANDBOX=${JSON.stringify(value.slice(0, 40))} is not a sandbox tmux-run knows; set it to workspace, workspace+net, read-only or off in the pane's shell`,
    };
  }
  const write = pathList('TMUX_RUN_SANDBOX_WRITE', shell.TMUX_RUN_SANDBOX_WRITE);
  if (isRefusal(write)) return write;
  const hide = pathList('TMUX_RUN_SANDBOX_HIDE', shell.TMUX_RUN_SANDBOX_HIDE);
  if (isRefusal(hide)) return hide;
  const sh = (name: string): string | undefined => {
    const v = shell[name] ?? env[name];
    return v !== undefined && v !== '' ? v : undefined;
  };
  const abs = (p: string | undefined): p is string => p !== undefined && isAbsolute(p);
  const homes = [...new Set([sh('HOME'), own.userHome].filter(abs))];
  const zdotdir = sh('ZDOTDIR');
  const tmuxEnv = sh('TMUX')?.split(',')[0];
  const hidden = [
    own.registryDir,
    own.tmuxSocket,
    tmuxEnv,
    `${sh('TMUX_TMPDIR') ?? '/tmp'}/tmux-${own.uid}`,
    sh('XDG_RUNTIME_DIR'),
    `/run/user/${own.uid}`,
    sh('SSH_AUTH_SOCK'),
    ...dbusSockets(sh('DBUS_SESSION_BUS_ADDRESS')),
    ...(hide ?? homes.flatMap((h) => DEFAULT_HIDDEN.map((s) => `${h}/${s}`))),
  ].filter(abs);
  const xdgConfig = sh('XDG_CONFIG_HOME');
  const readOnly = [
    own.auditPath,
    ...homes.map((h) => `${h}/.gitconfig`),
    ...(abs(xdgConfig) ? [`${xdgConfig}/git/config`] : homes.map((h) => `${h}/.config/git/config`)),
    env.GIT_CONFIG_GLOBAL,
  ].filter(abs);
  const bus = sh('DBUS_SESSION_BUS_ADDRESS');
  if (value === 'workspace+net' && bus !== undefined && /(^|;)unix:(.*,)?abstract=/.test(bus)) {
    return {
      ok: false,
      message: `DBUS_SESSION_BUS_ADDRESS names an abstract socket, which workspace+net cannot hide (abstract sockets belong to the network, which this sandbox shares); use TMUX_RUN_SANDBOX=workspace, or a bus at a path (unix:path=)`,
    };
  }
  const gitDir = env.GIT_DIR;
  const value2 = value as SandboxPlan['value'];
  return {
    ok: true,
    plan: {
      value: value2,
      net: value2 === 'workspace+net',
      cwd,
      // read-only: nothing but the private /tmp, whatever TMUX_RUN_SANDBOX_WRITE says.
      writable:
        value2 === 'read-only'
          ? []
          : [{ path: cwd, from: 'cwd' as const }, ...(write ?? []).map((path) => ({ path, from: 'write' as const }))],
      hidden: [...new Set(hidden.map((p) => resolve(p)))],
      readOnly: [...new Set(readOnly.map((p) => resolve(p)))],
      homes: [...homes, ...(abs(zdotdir) ? [zdotdir] : [])],
      gitDirs: gitDir ? [resolve(cwd, gitDir)] : [],
    },
  };
}

/** Every path of the plan the facts must resolve (pure). */
export function planPaths(plan: SandboxPlan): string[] {
  return [...new Set([plan.cwd, ...plan.writable.map((w) => w.path), ...plan.hidden, ...plan.readOnly, ...plan.homes])];
}

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
 * then no capabilities and the namespaces (src/os/bwrap.ts processWalls).
 */
export function sandboxArgs(plan: SandboxPlan, facts: SandboxFacts): { ok: true; args: string[] } | Refusal {
  const fact = (p: string): PathFact => facts.paths.get(p) ?? { real: p, kind: 'missing' };
  const refused = refuseWritable(plan, facts.paths);
  if (refused) return refused;
  if (facts.searchGaveUp !== undefined) {
    return {
      ok: false,
      message: `the writable tree is too big to search for git repositories (more than ${facts.searchGaveUp} directories) and their hooks could not be locked; cd into a smaller project directory, or use TMUX_RUN_SANDBOX=read-only`,
    };
  }
  const roots: string[] = [];
  for (const w of plan.writable) {
    const f = fact(w.path);
    if (f.kind !== 'missing') roots.push(f.real); // a missing TMUX_RUN_SANDBOX_WRITE path grants nothing
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
  const rootOf = (p: string): string | undefined =>
    roots.filter((r) => within(p, r)).sort((a, b) => b.length - a.length)[0];
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  const writable = [...new Set(roots)].sort(byDepth);
  for (const r of writable) args.push('--bind', r, r);
  const cwd = fact(plan.cwd).real;
  if (within(cwd, '/tmp') && rootOf(cwd) === undefined) args.push('--ro-bind', cwd, cwd);

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
  for (const d of [...pins].sort(byDepth)) args.push('--bind', d, d);

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
  for (const l of locks) args.push(...l);
  args.push(...processWalls(plan.net), '--chdir', cwd);
  return { ok: true, args };
}

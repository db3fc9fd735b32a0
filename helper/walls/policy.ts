// The sandbox's walls as data (pure): from what the shell reported at the run (TMUX_RUN_SANDBOX,
// its lists, HOME and friends) to the plan of the walls, or a refusal that says what to do; the
// plan and the facts gathered at dispatch (helper/walls/facts.ts) become bwrap's argument list
// in helper/walls/bwrap-args.ts. docs/sandbox.md says what they are.
import { isAbsolute, resolve } from 'node:path';
import { refuseWritable, within } from './writable.js';
import {
  SANDBOX_VALUES,
  type Refusal,
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

// The sandbox's terms and its argument list, passed on: importers of the policy find them here as before.
export * from './plan.js';
export { refuseWritable, within };
export { dirsBetween, sandboxArgs } from './bwrap-args.js';

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
  const sh = shellValue(shell, env);
  const homes = [...new Set([sh('HOME'), own.userHome].filter(isAbsolutePath))];
  const bus = sh('DBUS_SESSION_BUS_ADDRESS');
  if (value === 'workspace+net' && bus !== undefined && /(^|;)unix:(.*,)?abstract=/.test(bus)) {
    return {
      ok: false,
      message: `DBUS_SESSION_BUS_ADDRESS names an abstract socket, which workspace+net cannot hide (abstract sockets belong to the network, which this sandbox shares); use TMUX_RUN_SANDBOX=workspace, or a bus at a path (unix:path=)`,
    };
  }
  const zdotdir = sh('ZDOTDIR');
  const gitDir = env.GIT_DIR;
  const checked = value as SandboxPlan['value'];
  return {
    ok: true,
    plan: {
      value: checked,
      net: checked === 'workspace+net',
      cwd,
      // read-only: nothing but the private /tmp, whatever TMUX_RUN_SANDBOX_WRITE says.
      writable:
        checked === 'read-only'
          ? []
          : [{ path: cwd, from: 'cwd' as const }, ...(write ?? []).map((path) => ({ path, from: 'write' as const }))],
      hidden: [...new Set(hiddenPaths(sh, own, homes, hide).map((p) => resolve(p)))],
      readOnly: [...new Set(readOnlyPaths(sh, own, homes, env).map((p) => resolve(p)))],
      homes: [...homes, ...(isAbsolutePath(zdotdir) ? [zdotdir] : [])],
      gitDirs: gitDir ? [resolve(cwd, gitDir)] : [],
    },
  };
}

type ShellValue = (name: string) => string | undefined;
const isAbsolutePath = (p: string | undefined): p is string => p !== undefined && isAbsolute(p);

// A parameter as the shell reported it, else as its environment has it; empty counts as unset.
function shellValue(shell: ShellParams, env: Readonly<Record<string, string>>): ShellValue {
  return (name) => {
    const v = shell[name] ?? env[name];
    return v !== undefined && v !== '' ? v : undefined;
  };
}

// What a run may not see: the helper's registry (and a far helper's forward directory), tmux's
// sockets, the session's runtime dir and agents, the D-Bus sockets, and TMUX_RUN_SANDBOX_HIDE's
// list or else each home's secrets.
function hiddenPaths(sh: ShellValue, own: OwnFacts, homes: string[], hide: string[] | undefined): string[] {
  return [
    own.registryDir,
    own.tmuxSocket,
    own.forwardDir,
    sh('TMUX')?.split(',')[0],
    `${sh('TMUX_TMPDIR') ?? '/tmp'}/tmux-${own.uid}`,
    sh('XDG_RUNTIME_DIR'),
    `/run/user/${own.uid}`,
    sh('SSH_AUTH_SOCK'),
    ...dbusSockets(sh('DBUS_SESSION_BUS_ADDRESS')),
    ...(hide ?? homes.flatMap((h) => DEFAULT_HIDDEN.map((s) => `${h}/${s}`))),
  ].filter(isAbsolutePath);
}

// What a run may read but not change: the audit trail and git's global configuration.
function readOnlyPaths(
  sh: ShellValue,
  own: OwnFacts,
  homes: string[],
  env: Readonly<Record<string, string>>,
): string[] {
  const xdgConfig = sh('XDG_CONFIG_HOME');
  return [
    own.auditPath,
    ...homes.map((h) => `${h}/.gitconfig`),
    ...(isAbsolutePath(xdgConfig) ? [`${xdgConfig}/git/config`] : homes.map((h) => `${h}/.config/git/config`)),
    env.GIT_CONFIG_GLOBAL,
  ].filter(isAbsolutePath);
}

/** Every path of the plan the facts must resolve (pure). */
export function planPaths(plan: SandboxPlan): string[] {
  return [...new Set([plan.cwd, ...plan.writable.map((w) => w.path), ...plan.hidden, ...plan.readOnly, ...plan.homes])];
}

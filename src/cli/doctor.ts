// `tmux-run doctor`: checks what enrollment and runs need, one line per check with a fix.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, statSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import { auditPath } from '../core/audit/audit-log.js';
import { checkRegistryDir, resolveRegistryDir } from '../core/enrollment/layout.js';
import { listEnrolled, scanRecords } from '../broker/registry.js';
import { BUILD_ID } from '../core/protocol/build.js';
import { safeJson } from '../broker/escape.js';
import { formatRows, type Cell } from './common/output.js';
import { helperMainPath, packageRoot, shellQuote } from '../core/os/package-root.js';
import { SHELLS, type Shell } from './common/shells.js';
import { checkBashBuiltin } from './doctor-bash.js';
import { checkThisPane } from './doctor-pane.js';
import { checkHosts } from './doctor-hosts.js';
import { spawnKind, waiterKind } from '../core/os/native-spawn.js';
import type { Command } from './command.js';

export interface Check {
  check: string;
  ok: boolean;
  detail: string;
  /** What to do about a failure (or a warning); null when the check passed. */
  fix: string | null;
  /** A warning: something is missing that only some uses need; doctor still exits 0. */
  warning?: true;
}

const pass = (check: string, detail: string): Check => ({ check, ok: true, detail, fix: null });
const fail = (check: string, detail: string, fix: string): Check => ({ check, ok: false, detail, fix });
/** Something only some uses need is missing or wrong: said, with the fix, but doctor still passes. */
const warn = (check: string, detail: string, fix: string): Check => ({ check, ok: true, detail, fix, warning: true });

/** [major, minor] from the first `N.N` in a version string, e.g. "tmux 3.3a" or "zsh 5.9 (...)". */
export function versionOf(text: string): [number, number] | undefined {
  const m = /(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

const atLeast = (v: [number, number], want: [number, number]): boolean =>
  v[0] > want[0] || (v[0] === want[0] && v[1] >= want[1]);

/** Runs `program ...args` and returns its first line of output, or undefined when it cannot run. */
function firstLine(program: string, args: string[], env: NodeJS.ProcessEnv): string | undefined {
  const r = spawnSync(program, args, { env, encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error || r.status !== 0) return undefined;
  return (r.stdout || r.stderr).split('\n')[0]?.trim();
}

function checkProgram(
  name: string,
  program: string,
  args: string[],
  want: [number, number],
  env: NodeJS.ProcessEnv,
  install: string,
): Check {
  const line = firstLine(program, args, env);
  if (line === undefined) return fail(name, `${program} was not found on PATH (or did not run)`, install);
  // tmux built from git says "tmux master" or "tmux next-3.5": new enough.
  if (name === 'tmux' && /\b(master|next-)/.test(line)) return pass(name, line);
  const v = versionOf(line);
  if (v === undefined)
    return fail(name, `cannot tell the version from '${line}'`, `${install} (${want.join('.')} or newer)`);
  return atLeast(v, want)
    ? pass(name, line)
    : fail(name, `${line} is older than ${want.join('.')}`, `${install} (${want.join('.')} or newer)`);
}

/**
 * One shell a pane can enroll from: ok when new enough; a warning when it is too old or its
 * version cannot be told (its panes are refused); absent, said without failing (pane of that
 * shell cannot enroll, which nobody needs who does not run it). None usable at all fails.
 */
export function checkShell(shell: Shell, line: string | undefined): Check {
  const want = shell.minVersion.join('.');
  const install = `install ${shell.name} ${want} or newer to enroll ${shell.name} panes`;
  if (line === undefined)
    return pass(shell.name, `${shell.name} was not found on PATH: ${shell.name} panes cannot enroll`);
  const v = versionOf(line);
  if (v === undefined) return warn(shell.name, `cannot tell the version from '${line}'`, install);
  return atLeast(v, shell.minVersion)
    ? pass(shell.name, line)
    : warn(shell.name, `${line} is older than ${want}: ${shell.name} panes cannot enroll`, install);
}

/** Every shell's check; when none of them can enroll a pane, each is a failure. */
function checkShells(env: NodeJS.ProcessEnv): Check[] {
  const checks = SHELLS.map((s) => {
    const line = firstLine(s.name, s.versionArgs, env);
    return { check: checkShell(s, line), usable: line !== undefined && versionOf(line) !== undefined };
  });
  if (checks.some((c) => c.usable && !c.check.warning)) return checks.map((c) => c.check);
  const any = SHELLS.map((s) => `${s.name} ${s.minVersion.join('.')}`).join(', ');
  return checks.map(({ check: c }) =>
    fail(c.check, c.detail, `install one of ${any} (or newer): no shell here can enroll a pane`),
  );
}

function checkNode(): Check {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 20
    ? pass('node', `node ${process.versions.node}`)
    : fail('node', `node ${process.versions.node} is older than 20`, 'install Node.js 20 or newer');
}

function checkRegistry(env: NodeJS.ProcessEnv): Check {
  const dir = resolveRegistryDir(env);
  const q = shellQuote(dir);
  let st;
  try {
    st = lstatSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && isAbsolute(dir))
      return pass('registry', `${dir} does not exist yet; it will be created on first enrollment`);
  }
  try {
    checkRegistryDir(dir);
    return pass('registry', `${dir} is a private directory (0700, yours)`);
  } catch (e) {
    // checkRegistryDir's verdict, with the reason and the fix said apart.
    const change = `remove ${q} or set TMUX_RUN_DIR to a directory of your own`;
    if (st === undefined) return fail('registry', (e as Error).message, change);
    if (st.isSymbolicLink()) return fail('registry', `${dir} is a symlink`, change);
    if (!st.isDirectory()) return fail('registry', `${dir} is not a directory`, change);
    if (st.uid !== process.getuid?.()) return fail('registry', `${dir} belongs to uid ${st.uid}, not to you`, change);
    if ((st.mode & 0o077) !== 0)
      return fail(
        'registry',
        `${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)})`,
        `chmod 700 ${q}`,
      );
    return fail('registry', (e as Error).message, change);
  }
}

/** The built helper, and how it starts plain runs (src/core/os/native-spawn.ts): without the native spawn, a warning. */
function checkHelper(env: NodeJS.ProcessEnv): Check {
  const main = helperMainPath();
  const build = `run 'npm install' (or 'npm run build') in ${shellQuote(packageRoot())}`;
  if (!existsSync(main)) return fail('helper', `${main} is missing`, build);
  const spawn = spawnKind(env);
  if (spawn.kind === 'native') return pass('helper', `${main} exists; plain runs start with vfork (the native spawn)`);
  if (!spawn.unbuilt) return pass('helper', `${main} exists; plain runs start with Node's spawn (${spawn.why})`);
  return warn(
    'helper',
    `${main} exists, but ${spawn.why}: plain runs start with Node's spawn, which forks the helper (a few ms slower per run)${waiterKind(env).unbuilt ? ', and sandboxes run the perl waiter (slower too)' : ''}`,
    `install a C compiler (apt-get install gcc), then ${build}`,
  );
}

/** The audit directory can be written (or created), and the trail, if there, is a 0600 file of yours. */
function checkAudit(env: NodeJS.ProcessEnv): Check {
  const file = auditPath(env);
  const dir = dirname(file);
  let existing = dir;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  try {
    if (!statSync(existing).isDirectory())
      return fail('audit', `${existing} is not a directory`, `remove ${shellQuote(existing)} or set XDG_STATE_HOME`);
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch {
    return fail(
      'audit',
      `${existing} is not writable, so the audit trail cannot be written`,
      `make ${shellQuote(existing)} writable or set XDG_STATE_HOME`,
    );
  }
  if (existing !== dir) return pass('audit', `${dir} does not exist yet; it will be created on the first run`);
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return pass('audit', `${dir} is writable; no audit trail yet`);
  }
  const q = shellQuote(file);
  if (!st.isFile()) return fail('audit', `${file} is not a regular file (a symlink or something else)`, `remove ${q}`);
  if (st.uid !== process.getuid?.())
    return fail('audit', `${file} belongs to uid ${st.uid}, not to you`, `remove ${q}`);
  if ((st.mode & 0o077) !== 0)
    return fail('audit', `${file} is open to other users (mode ${(st.mode & 0o777).toString(8)})`, `chmod 600 ${q}`);
  if ((st.mode & 0o600) !== 0o600)
    return fail(
      'audit',
      `${file} is not writable (mode ${(st.mode & 0o777).toString(8)}), so every run is refused (audit_unavailable)`,
      `chmod 600 ${q}`,
    );
  return pass('audit', `${file} is a private file (0600, yours)`);
}

/** The pane states doctor names beside a pane: its helper sleeps, or lives and answers nothing. */
const SAID_STATES = new Set(['dormant', 'unresponsive']);

async function checkEnrollments(env: NodeJS.ProcessEnv, registry: Check): Promise<Check> {
  const dir = resolveRegistryDir(env);
  if (!registry.ok) return pass('enrollments', 'not checked: the registry directory is unsafe');
  if (!existsSync(dir)) return pass('enrollments', 'no panes enrolled');
  try {
    const records = scanRecords(dir);
    const live = await listEnrolled(dir);
    // A dormant pane (its helper let itself go, idle: docs/light.md) says so, as an unresponsive one does.
    const names = live.map((p) => (SAID_STATES.has(p.state) ? `${p.pane_id} state: ${p.state}` : p.pane_id)).join(', ');
    const stale = records.length - live.length;
    const staleText =
      stale > 0
        ? `; ${stale} record${stale === 1 ? '' : 's'} of helpers that do not answer ('tmux-run panes' removes those that are gone)`
        : '';
    const detail =
      live.length === 0
        ? `no panes enrolled${staleText}`
        : `${live.length} pane${live.length === 1 ? '' : 's'} enrolled and answering (${names})${staleText}`;
    // A helper started before an upgrade runs the old code: servers of this build refuse it.
    const builds = new Map(records.map((r) => [r.enrollment_generation, r.build]));
    const older = live.filter((p) => builds.get(p.enrollment_generation) !== BUILD_ID).map((p) => p.pane_id);
    const warnings: Array<{ detail: string; fix: string }> = [];
    if (older.length > 0) {
      warnings.push({
        detail: `${older.join(', ')} enrolled by another build of tmux-run (agents' runs there are refused helper_outdated)`,
        fix: 'enroll those panes again: run tmux_run_unenroll, then source the snippet, in each (or open new panes)',
      });
    }
    // A TMUX_RUN_SANDBOX value that is not known (a typo) refuses every run in that pane.
    const invalid = live.filter((p) => p.sandbox === 'invalid').map((p) => p.pane_id);
    if (invalid.length > 0) {
      warnings.push({
        detail: `${invalid.join(', ')} ${invalid.length === 1 ? 'sets' : 'set'} a TMUX_RUN_SANDBOX that tmux-run does not know (agents' runs there are refused sandbox_unavailable)`,
        fix: 'set TMUX_RUN_SANDBOX to off, workspace, workspace+net or read-only in those panes',
      });
    }
    const unserved = live.filter((p) => p.prompt_refused);
    if (unserved.length > 0) {
      warnings.push({
        detail: unserved
          .map(
            (p) =>
              `${p.pane_id}'s prompt cannot be served by the screen check (${p.prompt_refused}): agents' runs there are refused editor_not_empty`,
          )
          .join('; '),
        fix: 'change that prompt as the pane said when it enrolled (a part that changes at each draw, such as a clock with seconds, or cursor movements), then enroll the pane again',
      });
    }
    if (warnings.length > 0) {
      return warn(
        'enrollments',
        [detail, ...warnings.map((w) => w.detail)].join('; '),
        warnings.map((w) => w.fix).join('; '),
      );
    }
    return pass('enrollments', detail);
  } catch (e) {
    return fail('enrollments', `cannot list enrollments: ${(e as Error).message}`, 'see the registry check above');
  }
}

/**
 * bwrap can make the sandbox a pane's TMUX_RUN_SANDBOX asks for: ok; missing, a warning (only
 * sandboxed runs need it, and they are refused); there but unable (user namespaces refused), a failure.
 */
async function checkSandbox(env: NodeJS.ProcessEnv): Promise<Check> {
  const { probeBwrap } = await import('../core/os/bwrap.js');
  const r = await probeBwrap(env);
  if (r.ok) {
    const w = waiterKind(env);
    const waiter = w.kind === 'native' ? 'the C waiter' : `the perl waiter (${w.why})`;
    return pass('sandbox', `${r.bwrap} makes sandboxes here (TMUX_RUN_SANDBOX can be used); their pid 1 is ${waiter}`);
  }
  if (r.missing) {
    return warn(
      'sandbox',
      `${r.reason.split(';')[0]}; runs in a pane with TMUX_RUN_SANDBOX set are refused`,
      'install bubblewrap (apt-get install bubblewrap)',
    );
  }
  return fail('sandbox', r.reason, 'allow unprivileged user namespaces, or set TMUX_RUN_SANDBOX=off in your panes');
}

/** Every check, in the order printed. */
export async function runChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const tmux = env.TMUX_RUN_TMUX || 'tmux';
  const registry = checkRegistry(env);
  const pane = checkThisPane(env);
  return [
    ...(pane ? [pane] : []),
    checkNode(),
    checkProgram('tmux', tmux, ['-V'], [3, 2], env, 'install tmux 3.2 or newer'),
    ...checkShells(env),
    checkBashBuiltin(env),
    registry,
    checkHelper(env),
    checkAudit(env),
    await checkEnrollments(env, registry),
    await checkSandbox(env),
    checkHosts(env),
  ];
}

export const doctor: Command = {
  name: 'doctor',
  summary: 'check node, tmux, the shells and directory permissions',
  help: `Usage: tmux-run doctor [--json]

Check what tmux-run needs: node 20 or newer, tmux 3.2 or newer, the shells panes enroll from
(zsh 5.9, bash 4.4, fish 3.4 or newer: one that is too old is a warning, one that is not
installed is said and passes; none that can enroll fails), a private registry directory (TMUX_RUN_DIR), the built helper, a private audit trail, which enrolled
panes answer, why the pane doctor runs in is not enrolled when its bash refused where that
may not have been seen (ble.sh), and whether bwrap can make the sandbox TMUX_RUN_SANDBOX asks for (a warning that
does not fail doctor when bwrap is missing), and the hosts set up for tmux-run ssh (a warning,
remote_unavailable, for one set up by another build of tmux-run). Exits 0 when all is well, 1
otherwise.

Options:
  --json      print an array of {check, ok, detail, fix} (and warning: true on a warning)
  -h, --help  show this help
`,
  spec: { options: { json: false } },
  async run(args, io) {
    const checks = await runChecks(io.env);
    const ok = checks.every((c) => c.ok);
    if (args.options.has('json')) {
      io.out(safeJson(checks, 2) + '\n');
      return ok ? 0 : 1;
    }
    const rows: Cell[][] = checks.map((c) => [
      c.warning
        ? { text: 'warn', color: 'yellow' }
        : c.ok
          ? { text: 'ok', color: 'green' }
          : { text: 'FAIL', color: 'red' },
      c.check,
      c.fix === null ? c.detail : `${c.detail}; fix: ${c.fix}`,
    ]);
    io.out(formatRows(io, rows).lines.join('\n') + '\n');
    const failed = checks.filter((c) => !c.ok).map((c) => c.check);
    if (failed.length > 0)
      io.err(
        `tmux-run: doctor: ${failed.length} check${failed.length === 1 ? '' : 's'} failed (${failed.join(', ')})\n`,
      );
    return ok ? 0 : 1;
  },
};

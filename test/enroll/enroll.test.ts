// Enrollment, as a person does it: source the snippet in a zsh pane, see exactly that pane
// listed, source it again harmlessly, end it from the shell, enroll again. Also what enrolling
// must not do: leak descriptors into commands, draw anything, touch options, history or names.
import { lstatSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { enroll, filesIn, helperChildren, listed, waitEmpty } from '../../lab/enrollment.js';
import { processAlive } from '../../lab/processes.js';
import { SNIPPET, SOURCE } from '../../lab/product.js';
import { useServer } from '../../lab/lifecycle.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';

const HEX32 = /^[0-9a-f]{32}$/;

let server: TmuxServer;

const scope = useServer();
beforeAll(() => {
  server = scope.server;
});

const mode = (path: string): number => lstatSync(path).mode & 0o7777;

describe('enrollment', () => {
  it('lists exactly the enrolled pane, with its shell, cwd and an idle state; files are private', async () => {
    const other = await server.newPane(); // a zsh pane that is not enrolled
    const pane = await server.newPane();
    const shellPid = await pane.shellPid();
    expect(await listed(server.registryDir)).toEqual([]);

    const listing = await enroll(pane);
    const all = await listed(server.registryDir);
    expect(all).toHaveLength(1);
    expect(all[0]).toEqual(listing);
    expect(listing.pane_id).toBe(pane.id);
    expect(listing.pane_id).not.toBe(other.id);
    expect(listing.shell_pid).toBe(shellPid);
    expect(listing.cwd).toBe(server.home);
    expect(listing.state).toBe('idle');
    expect(listing.queued).toBe(0);
    expect(listing.generation).toMatch(HEX32);
    expect(listing.process_generation).toMatch(HEX32);
    expect(listing.enrollment_generation).toMatch(HEX32);
    expect(listing.session).toBe('harness');
    expect(listing.tmux_socket).toBe(server.socket);
    expect(Number.isNaN(Date.parse(listing.enrolled_at))).toBe(false);
    expect(helperChildren(shellPid)).toEqual([listing.helper_pid]);

    // The registry directory stays 0700; the record and the socket are 0600, as is every
    // other file of the enrollment (FIFOs, log).
    expect(mode(server.registryDir)).toBe(0o700);
    const record = join(server.registryDir, `${listing.enrollment_generation}.json`);
    const socket = join(server.registryDir, `${listing.enrollment_generation}.sock`);
    expect(lstatSync(record).isFile()).toBe(true);
    expect(mode(record)).toBe(0o600);
    expect(lstatSync(socket).isSocket()).toBe(true);
    expect(mode(socket)).toBe(0o600);
    for (const name of filesIn(server.registryDir)) {
      expect([name, mode(join(server.registryDir, name))]).toEqual([name, 0o600]);
      expect(lstatSync(join(server.registryDir, name)).uid).toBe(process.getuid!());
    }
    const rec = JSON.parse(readFileSync(record, 'utf8'));
    expect(rec).toMatchObject({
      pane_id: pane.id,
      shell_pid: shellPid,
      helper_pid: listing.helper_pid,
      generation: listing.generation,
    });

    // The listing follows the shell's working directory.
    await pane.run('cd /tmp');
    expect((await listed(server.registryDir))[0]?.cwd).toBe('/tmp');

    await pane.kill();
    await other.kill();
    await waitEmpty(server.registryDir);
    expect(await listed(server.registryDir)).toEqual([]);
  });

  it('sourcing again in the same shell is harmless: one enrollment, one helper, same generation', async () => {
    const pane = await server.newPane();
    const shellPid = await pane.shellPid();
    const first = await enroll(pane);
    const files = filesIn(server.registryDir);

    const again = await pane.runWithStatus(SOURCE);
    expect(again.status).toBe(0);
    expect(again.output).toBe(`tmux-run: pane ${pane.id} is already enrolled (generation ${first.generation})`);
    const third = await pane.runWithStatus(`. ${SNIPPET}`);
    expect(third.status).toBe(0);
    expect(third.output.split('\n')).toHaveLength(1);

    const all = await listed(server.registryDir);
    expect(all).toHaveLength(1);
    expect(all[0]?.generation).toBe(first.generation);
    expect(all[0]?.helper_pid).toBe(first.helper_pid);
    expect(helperChildren(shellPid)).toEqual([first.helper_pid]);
    expect(filesIn(server.registryDir)).toEqual(files);
    expect(await pane.run('print -r -- ${(j: :)${(M)precmd_functions:#*tmux_run*}}')).toBe('_tmux_run_precmd');

    await pane.kill();
    await waitEmpty(server.registryDir);
  });

  it('tmux_run_unenroll ends the enrollment completely; the shell goes on and can enroll again', async () => {
    const pane = await server.newPane();
    const shellPid = await pane.shellPid();
    const first = await enroll(pane);

    const out = await pane.runWithStatus('tmux_run_unenroll');
    expect(out).toEqual({ output: `tmux-run: pane ${pane.id} unenrolled`, status: 0 });
    // By the time it says so, the helper is gone and so are all its files.
    expect(processAlive(first.helper_pid)).toBe(false);
    expect(helperChildren(shellPid)).toEqual([]);
    expect(filesIn(server.registryDir)).toEqual([]);
    expect(await listed(server.registryDir)).toEqual([]);

    // The shell works, keeps no hook, descriptor or state of the enrollment.
    expect(await pane.run('echo still here')).toBe('still here');
    expect(await pane.run('print -u2 -- errors still show')).toBe('errors still show');
    expect(
      await pane.run(
        'print -r -- ${#${(M)precmd_functions:#*tmux_run*}} ${+_tmux_run_helper_pid} ${+_tmux_run_req_fd}',
      ),
    ).toBe('0 0 0');
    expect(
      readdirSync(`/proc/${shellPid}/fd`)
        .map((fd) => readlinkSync(`/proc/${shellPid}/fd/${fd}`))
        .filter((t) => t.includes(server.registryDir)),
    ).toEqual([]);
    expect(await pane.runWithStatus('tmux_run_unenroll')).toEqual({
      output: 'tmux-run: this shell is not enrolled',
      status: 1,
    });

    // Enrolling again gives a new enrollment of the same shell.
    const second = await enroll(pane);
    expect(second.generation).not.toBe(first.generation);
    expect(second.enrollment_generation).not.toBe(first.enrollment_generation);
    expect(second.process_generation).toBe(first.process_generation);
    expect(second.server_generation).toBe(first.server_generation);
    expect(second.helper_pid).not.toBe(first.helper_pid);
    expect(await listed(server.registryDir)).toHaveLength(1);

    expect((await pane.runWithStatus('tmux_run_unenroll')).status).toBe(0);
    expect(filesIn(server.registryDir)).toEqual([]);
    await pane.kill();
  });

  it('sourced from .zshrc, the new shell is enrolled soon after its first prompt, silently', async () => {
    const pane = await server.newPane({ zshrc: `PROMPT='$ '\nsource ${SNIPPET}\n` });
    const shellPid = await pane.shellPid();
    // Listed once the helper is enrolled; the shell has read its ready line once it reports its mode.
    const all = await waitUntil(
      async () => {
        const l = await listed(server.registryDir);
        return l.some((p) => p.mode !== 'unknown') ? l : undefined;
      },
      10_000,
      'the pane to be listed',
    );
    expect(all.map((p) => [p.pane_id, p.shell_pid])).toEqual([[pane.id, shellPid]]);
    expect((await pane.capture()).trim()).toBe('$');
    expect(await pane.run(`source ${SNIPPET}`)).toMatch(/already enrolled/);
    await pane.kill();
    await waitEmpty(server.registryDir);
  });

  it('creates a missing registry directory 0700 and uses it', async () => {
    const dir = join(server.baseDir, 'fresh-run');
    const pane = await server.newPane({ env: { TMUX_RUN_DIR: dir } });
    const listing = await enroll(pane, dir);
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(mode(dir)).toBe(0o700);
    expect(listing.pane_id).toBe(pane.id);
    expect(await listed(server.registryDir)).toEqual([]);
    expect((await pane.runWithStatus('tmux_run_unenroll')).status).toBe(0);
    expect(filesIn(dir)).toEqual([]);
    await pane.kill();
  });
});

describe('what enrolling leaves alone', () => {
  it('commands the person runs get no descriptor of tmux-run; the helper holds none of the terminal', async () => {
    const pane = await server.newPane();
    const listing = await enroll(pane);
    const out = await pane.run('ls -l /proc/self/fd');
    const fds = out
      .split('\n')
      .filter((l) => l.startsWith('l'))
      .map((l) => {
        const m = / (\d+) -> (.*)$/.exec(l);
        return [Number(m?.[1]), m?.[2] ?? ''] as const;
      });
    expect(fds.map(([n]) => n)).toEqual([0, 1, 2, 3]);
    expect(fds[3]?.[1]).toMatch(/^\/proc\/\d+\/fd$/);
    expect(out).not.toContain(server.registryDir);
    // Not in a pipeline or a subshell either.
    expect(await pane.run('( ls /proc/self/fd | wc -l )')).toBe('4');
    expect(await pane.run(`ls -l /proc/self/fd | grep -c -- ${server.registryDir} || true`)).toBe('0');

    // The helper: stdin /dev/null, output to its log, nothing on the pane's terminal.
    const targets = readdirSync(`/proc/${listing.helper_pid}/fd`).map((fd) =>
      readlinkSync(`/proc/${listing.helper_pid}/fd/${fd}`),
    );
    expect(readlinkSync(`/proc/${listing.helper_pid}/fd/0`)).toBe('/dev/null');
    expect(targets.filter((t) => t.startsWith('/dev/pts') || t.startsWith('/dev/tty'))).toEqual([]);
    await pane.kill();
    await waitEmpty(server.registryDir);
  });

  it('draws nothing in the pane: only what was typed and its output', async () => {
    const pane = await server.newPane();
    await enroll(pane);
    await pane.run('true');
    // (The pane's first line is the blank one zsh leaves before its first prompt.)
    const screen = async (): Promise<string> => (await pane.capture()).replace(/^\n+/, '');
    expect(await screen()).toBe(`$ ${SOURCE}\n$ true\n$`);
    const listing = await waitUntil(async () => (await listed(server.registryDir))[0], 5000, 'the listing');
    expect(listing.pane_id).toBe(pane.id);
    await pane.run('echo done');
    expect(await screen()).toBe(`$ ${SOURCE}\n$ true\n$ echo done\ndone\n$`);
    await pane.kill();
    await waitEmpty(server.registryDir);
  });

  it("changes none of the person's options, aliases, commands or history, and defines only its own names", async () => {
    // A person with unusual options and aliases that would break a careless snippet.
    const zshrc = [
      "PROMPT='$ '",
      'setopt ksh_arrays sh_word_split no_unset warn_create_global extended_glob no_bg_nice',
      "alias kill='echo hijacked' zle='echo hijacked' print='print' local='echo hijacked' exec='echo hijacked'",
      "alias -g '...'='../..'",
    ].join('\n');
    const pane = await server.newPane({ zshrc: zshrc + '\n' });
    const typed: string[] = [];
    const run = async (cmd: string): Promise<string> => {
      typed.push(cmd);
      return pane.run(cmd);
    };
    const snapshot = async () => ({
      options: await run('setopt'),
      functions: (await run('print -l -- ${(ok)functions[@]}')).split('\n'),
      parameters: (await run('print -l -- ${(ok)parameters[@]}')).split('\n'),
      aliases: await run('alias -L'),
      widgets: (await run('print -l -- ${(ok)widgets[@]}')).split('\n'),
      builtins: (await run('print -l -- ${(ok)builtins[@]}')).split('\n'),
      whence: await run('whence -w rm mkdir stat kill zle print local exec mkfifo sysread zselect'),
      umask: await run('umask'),
      traps: await run('trap'),
    });
    const before = await snapshot();

    typed.push(SOURCE);
    const r = await pane.runWithStatus(SOURCE);
    expect(r).toEqual({ output: '', status: 0 });
    const listing = await waitUntil(
      async () => (await listed(server.registryDir)).find((p) => p.pane_id === pane.id),
      5000,
      'the listing',
    );
    const after = await snapshot();

    expect(after.options).toBe(before.options);
    expect(after.aliases).toBe(before.aliases);
    expect(after.umask).toBe(before.umask);
    expect(after.traps).toBe(before.traps);
    const own = /^_?tmux_run_/;
    const added = (a: string[], b: string[]): string[] => a.filter((n) => !b.includes(n));
    expect(added(after.functions, before.functions).filter((n) => !own.test(n))).toEqual([]);
    expect(added(after.functions, before.functions)).toContain('tmux_run_unenroll');
    expect(added(before.functions, after.functions)).toEqual([]);
    expect(added(after.parameters, before.parameters).filter((n) => !own.test(n))).toEqual([]);
    expect(added(before.parameters, after.parameters)).toEqual([]);
    expect(added(after.widgets, before.widgets)).toEqual(['_tmux_run_on_request']);
    // Module builtins the snippet loads (feature by feature, so no rm, mkdir or stat is replaced).
    expect(
      added(after.builtins, before.builtins).filter(
        (n) => !['sysopen', 'sysread', 'syswrite', 'zstat', 'zf_mkdir', 'zf_rm', 'zselect'].includes(n),
      ),
    ).toEqual([]);
    expect(after.whence.replace(/^(sysread|zselect): .*$/gm, '')).toBe(
      before.whence.replace(/^(sysread|zselect): .*$/gm, ''),
    );

    // History holds what was typed, and nothing else.
    const history = (await pane.run('fc -ln 1')).split('\n');
    expect(history).toEqual(typed);

    // The person's aliases did not break the snippet: unenroll works with kill and zle aliased.
    expect(await pane.runWithStatus('tmux_run_unenroll')).toEqual({
      output: `tmux-run: pane ${pane.id} unenrolled`,
      status: 0,
    });
    expect(processAlive(listing.helper_pid!)).toBe(false);
    expect(filesIn(server.registryDir)).toEqual([]);
    expect(await pane.run('setopt')).toBe(before.options);
    await pane.kill();
  });
});

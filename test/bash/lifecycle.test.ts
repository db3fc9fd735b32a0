// Enrolling a bash pane as a person does, and how it ends: listed with its shell and check,
// sourced twice harmlessly, ended by tmux_run_unenroll or a revocation, refused where it must be,
// a SIGKILLed helper said at the next prompt, a closed pane and `exec bash` leaving nothing.
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { filesIn, helperChildren, listed, waitEmpty } from '../../lab/enrollment.js';
import { callRun, type McpHandle } from '../../lab/mcp.js';
import { processAlive } from '../../lab/processes.js';
import { runCli } from '../../lab/cli.js';
import { useServer } from '../../lab/lifecycle.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';
import { BASH_SNIPPET, BASH_SOURCE, bashPane, enrollBash, enrolledBash, ok, refusal } from './support.js';
import { checkRunResult } from '../mcp/support.js';
import { finalOf, runIdOf, start } from '../long/support.js';

let server: TmuxServer;
let mcp: McpHandle;
const scope = useServer();
beforeAll(async () => {
  server = scope.server;
  mcp = await scope.startMcp();
});

async function expectEnded(helperPid: number): Promise<void> {
  await waitUntil(() => !processAlive(helperPid), 5000, `helper ${helperPid} to exit`);
  await waitEmpty(server.registryDir, 5000);
}

describe('enrolling a bash pane', () => {
  it("leaves the person's jobs as they were and is no job itself: `jobs` and a bare `wait` as before", async () => {
    // The helper's child leaves the job table by `disown -r` when it is the only job, else by its
    // pid (shell/tmux-run.bash, _tmux_run_launch): either way `wait` must not wait for the helper,
    // and a job of the person's must stay a job.
    const alone = await bashPane(server);
    const first = await enrollBash(alone);
    expect(await alone.run('jobs; wait; echo "waited $?"', { timeoutMs: 5000 })).toBe('waited 0');
    expect(helperChildren(await alone.shellPid())).toEqual([first.helper_pid]);
    await alone.kill();

    const pane = await bashPane(server, { rc: 'sleep 300 &' });
    const listing = await enrollBash(pane);
    expect(await pane.run('jobs -p | wc -l; jobs %sleep >/dev/null && echo kept')).toBe('1\nkept');
    expect(await pane.run('kill %1; wait; echo "waited"', { timeoutMs: 5000 })).toMatch(/waited$/);
    expect(helperChildren(await pane.shellPid())).toEqual([listing.helper_pid]);
    expect(ok(checkRunResult((await callRun(mcp.client, listing, 'echo still')).result)).stdout.data).toBe('still\n');
    await pane.kill();
  });

  it('lists it with shell bash and editor_check exact (the builtin); files private; source twice is harmless', async () => {
    const pane = await bashPane(server);
    const shellPid = await pane.shellPid();
    const listing = await enrollBash(pane);
    expect(listing).toMatchObject({
      pane_id: pane.id,
      shell: 'bash',
      editor_check: 'exact',
      editor_check_reason: null,
      state: 'idle',
    });
    expect(listing.mode).toBe('auto');
    expect(helperChildren(shellPid)).toEqual([listing.helper_pid]);
    for (const name of filesIn(server.registryDir)) {
      expect([name, lstatSync(join(server.registryDir, name)).mode & 0o777]).toEqual([name, 0o600]);
    }
    expect(await pane.run('jobs; echo "jobs done"')).toBe('jobs done');
    const again = await pane.runWithStatus(BASH_SOURCE);
    expect(again).toEqual({
      status: 0,
      output: `tmux-run: pane ${pane.id} is already enrolled (generation ${listing.generation})`,
    });
    expect((await listed(server.registryDir)).map((p) => p.generation)).toEqual([listing.generation]);
    expect(helperChildren(shellPid)).toEqual([listing.helper_pid]);
    const panes = await runCli(['panes'], server.env);
    expect(panes.stdout).toMatch(
      new RegExp(`^${pane.id}\\s+${listing.generation}\\s.*\\sbash\\s+idle\\s+auto\\s`, 'm'),
    );

    expect(await pane.run('tmux_run_unenroll')).toBe(`tmux-run: pane ${pane.id} unenrolled`);
    await expectEnded(listing.helper_pid);
    expect(await pane.run('trap -p WINCH; echo "[$PS0]"; echo "$PROMPT_COMMAND" | grep -c _tmux_run')).toBe('[]\n0');
    expect(await pane.runWithStatus('tmux_run_unenroll')).toEqual({
      output: 'tmux-run: this shell is not enrolled',
      status: 1,
    });
    await pane.kill();
  });

  it('a revocation ends it; the shell lives and says so at its next prompt', async () => {
    const { pane, listing } = await enrolledBash(server);
    const r = await runCli(['revoke', pane.id], server.env);
    expect(r.stdout).toBe(`revoked pane ${pane.id} (generation ${listing.generation})\n`);
    await expectEnded(listing.helper_pid);
    // Said at the next prompt (the trap cannot print without spoiling the line).
    expect(await pane.run('echo alive')).toBe("alive\ntmux-run: this pane's enrollment was revoked");
    expect(await pane.run('echo quiet')).toBe('quiet');
    await pane.kill();
  });

  it('refuses where it must, leaving nothing', async () => {
    const env = { ...server.env, TMUX_RUN_DIR: server.registryDir };
    const sh = spawnSync('sh', ['-c', `. ${BASH_SNIPPET}`], { env, encoding: 'utf8' });
    expect(sh.stderr).toMatch(/^tmux-run: not enrolled: this shell is not bash;/);
    const dashC = spawnSync('bash', ['--norc', '-c', BASH_SOURCE], { env, encoding: 'utf8' });
    expect(dashC.stderr).toMatch(/not enrolled: this bash runs a command string \(bash -c\)/);
    const script = join(server.home, 'script.bash');
    spawnSync('sh', ['-c', `echo '${BASH_SOURCE}' > ${script}`]);
    expect(spawnSync('bash', [script], { env, encoding: 'utf8' }).stderr).toMatch(
      /not enrolled: this bash is not interactive/,
    );
    const outside: Record<string, string | undefined> = { ...env, TMUX: undefined, TMUX_PANE: undefined };
    const out = spawnSync('bash', ['--norc', '-i'], { env: outside, input: `${BASH_SOURCE}\n`, encoding: 'utf8' });
    expect(out.stderr).toMatch(/not enrolled: this shell is not running inside tmux/);

    const pane = await bashPane(server);
    const open = join(server.home, 'open-dir');
    mkdirSync(open, { mode: 0o755 });
    // bash cannot read a mode without a fork: the helper checks it and refuses, said at a prompt after.
    expect(await pane.runWithStatus(`TMUX_RUN_DIR=${open} ${BASH_SOURCE}`)).toEqual({ status: 0, output: '' });
    let said = '';
    await waitUntil(
      async () => /open to other/.test((said += await pane.run('true'))),
      10_000,
      'the refusal at a prompt',
    );
    expect(said).toBe(`tmux-run: not enrolled: ${open} is open to other users (mode 755); run: chmod 700 '${open}'`);
    expect(await pane.runWithStatus(`TMUX_RUN_NODE=/nonexistent/node ${BASH_SOURCE}`)).toMatchObject({ status: 1 });
    expect(filesIn(open)).toEqual([]);
    expect(filesIn(server.registryDir)).toEqual([]);
    expect(helperChildren(await pane.shellPid())).toEqual([]);
    await pane.kill();
  });

  it('a SIGKILLed helper is a clear error, and the shell says so at its next prompt', async () => {
    const { pane, listing } = await enrolledBash(server);
    process.kill(listing.helper_pid, 'SIGKILL');
    await waitUntil(() => !processAlive(listing.helper_pid), 5000, 'the helper to die');
    const e = refusal(checkRunResult((await callRun(mcp.client, listing, 'true')).result));
    expect(['not_enrolled', 'helper_unreachable', 'helper_lost'], JSON.stringify(e)).toContain(e.code);
    expect(e.effects.state, JSON.stringify(e)).toBe('none');
    expect(await pane.run('echo alive')).toBe(
      `alive\ntmux-run: the helper for pane ${pane.id} exited; this pane is no longer enrolled (source ${BASH_SNIPPET} to enroll it again)`,
    );
    await waitEmpty(server.registryDir, 5000);
    expect(await pane.run('true')).toBe('');
    await pane.kill();
  });

  it('a closed pane leaves no helper; `exec bash` gets a new generation and the old one is refused', async () => {
    const closed = await enrolledBash(server);
    await closed.pane.kill();
    await expectEnded(closed.listing.helper_pid);

    const { pane, listing } = await enrolledBash(server);
    await pane.type(`exec bash --noprofile --norc -i`, { enter: true });
    await expectEnded(listing.helper_pid);
    await pane.waitFor((s) => /\$ $/.test(s) || s.endsWith('$'));
    const e = refusal(checkRunResult((await callRun(mcp.client, listing, 'true')).result));
    expect(['stale_generation', 'not_enrolled']).toContain(e.code);
    await pane.kill();
  });

  it('a long run: tmux_run_start, then tmux_run_wait for its end', async () => {
    const { pane, listing } = await enrolledBash(server);
    const started = await start(mcp.client, listing, 'sleep 1; echo long-done');
    expect(['queued', 'running']).toContain(started.pending.state);
    const d = ok(await finalOf(mcp.client, listing, runIdOf(started)));
    expect(d.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
    expect(d.stdout.data).toBe('long-done\n');
    await pane.kill();
  });
});

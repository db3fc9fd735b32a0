// An enrollment ends with its shell, whatever ends the shell: `exit`, `exit` with a background
// job still holding the shell's descriptors, `exec` into a new shell, kill-pane, respawn-pane.
// A helper killed with SIGKILL is never listed again, and the shell says so at its next prompt.
// Signals meant for the pane (^C, SIGINT, SIGHUP) do not end it.
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { enroll, helperChildren, listed, waitEmpty } from '../../lab/enrollment.js';
import type { Pane } from '../../lab/pane.js';
import { processAlive } from '../../lab/processes.js';
import { SNIPPET, SOURCE } from '../../lab/product.js';
import { useServer } from '../../lab/lifecycle.js';
import type { TmuxServer } from '../../lab/server.js';
import { waitUntil } from '../../lab/waiting.js';

let server: TmuxServer;

const scope = useServer();
beforeAll(() => {
  server = scope.server;
});

/** Waits until the helper is gone, nothing of it is listed, and the directory is empty. */
async function expectEnded(helperPid: number, paneId: string, timeoutMs = 15_000): Promise<void> {
  await waitUntil(() => !processAlive(helperPid), timeoutMs, `helper ${helperPid} to exit`);
  await waitEmpty(server.registryDir, timeoutMs);
  expect((await listed(server.registryDir)).filter((p) => p.pane_id === paneId)).toEqual([]);
}

/** Whether the pane is still there. */
async function paneExists(p: Pane): Promise<boolean> {
  const ids = (await server.tmux(['list-panes', '-a', '-F', '#{pane_id}'])).split('\n');
  return ids.includes(p.id);
}

describe('the shell ends', () => {
  it('`exit` typed: the helper exits and its files are removed', async () => {
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await pane.type('exit', { enter: true });
    await expectEnded(listing.helper_pid, pane.id);
    await waitUntil(async () => !(await paneExists(pane)), 5000, 'the pane to close');
  });

  it('`exit` while a background subshell still holds the descriptors: the helper still exits', async () => {
    const pane = await server.newPane();
    const listing = await enroll(pane);
    // No SIGHUP to jobs and no "you have running jobs": the subshell outlives the shell.
    await pane.run('setopt no_hup no_check_jobs');
    const out = await pane.run('( sleep 30; true ) & print -r -- sub=$!');
    const sub = Number(/sub=(\d+)/.exec(out)?.[1]);
    expect(processAlive(sub)).toBe(true);
    const heldBySub = (): string[] =>
      readdirSync(`/proc/${sub}/fd`)
        .map((fd) => {
          try {
            return readlinkSync(`/proc/${sub}/fd/${fd}`);
          } catch {
            return '';
          }
        })
        .filter((t) => t.startsWith(server.registryDir));
    // The subshell (a fork, not an exec) really holds the shell's ends of the channel.
    expect(heldBySub().some((t) => t.endsWith('.req'))).toBe(true);
    expect(heldBySub().some((t) => t.endsWith('.rsp'))).toBe(true);
    try {
      await pane.type('exit', { enter: true });
      await expectEnded(listing.helper_pid, pane.id);
      expect(processAlive(sub)).toBe(true); // the helper went although the channel never closed
    } finally {
      try {
        process.kill(-sub, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await waitUntil(() => !processAlive(sub), 5000, 'the subshell to go');
  });

  it('`exec zsh -i` in the pane: the old enrollment ends; the new shell is not enrolled but can enroll', async () => {
    const pane = await server.newPane();
    const shellPid = await pane.shellPid();
    const first = await enroll(pane);
    await pane.run('exec zsh -i');
    expect(await pane.shellPid()).toBe(shellPid);
    await expectEnded(first.helper_pid, pane.id);
    expect(await pane.run('print -r -- ${+_tmux_run_helper_pid}')).toBe('0');
    const second = await enroll(pane);
    // Same process, same start time: the same process generation, but a new enrollment.
    expect(second.process_generation).toBe(first.process_generation);
    expect(second.generation).not.toBe(first.generation);
    await pane.kill();
    await expectEnded(second.helper_pid, pane.id);
  });

  it('kill-pane: the helper exits and its files are removed', async () => {
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await pane.kill();
    await expectEnded(listing.helper_pid, pane.id);
  });

  it('respawn-pane -k: the old enrollment disappears; the new shell in the pane is not enrolled', async () => {
    const pane = await server.newPane();
    const oldShell = await pane.shellPid();
    const listing = await enroll(pane);
    await server.tmux(['respawn-pane', '-k', '-t', pane.id]);
    await pane.waitForPrompt();
    const newShell = await pane.shellPid();
    expect(newShell).not.toBe(oldShell);
    await expectEnded(listing.helper_pid, pane.id);
    expect(await listed(server.registryDir)).toEqual([]);
    expect(await pane.run('print -r -- ${+_tmux_run_helper_pid} ${+functions[tmux_run_unenroll]}')).toBe('0 0');
    expect(helperChildren(newShell)).toEqual([]);
    await pane.kill();
  });
});

describe('the helper is killed', () => {
  it('SIGKILL: never listed again, its record is cleaned, and the shell says so at its next prompt', async () => {
    const pane = await server.newPane();
    const listing = await enroll(pane);
    const record = join(server.registryDir, `${listing.enrollment_generation}.json`);
    expect(existsSync(record)).toBe(true);
    process.kill(listing.helper_pid, 'SIGKILL');
    await waitUntil(() => !processAlive(listing.helper_pid), 5000, 'the helper to die');
    // The broker's listing drops the dead enrollment and removes what it left.
    expect(await listed(server.registryDir)).toEqual([]);
    expect(existsSync(record)).toBe(false);
    expect(existsSync(join(server.registryDir, `${listing.enrollment_generation}.sock`))).toBe(false);

    const r = await pane.runWithStatus('true');
    expect(r.status).toBe(0);
    expect(r.output).toBe(
      `tmux-run: the helper for pane ${pane.id} exited; this pane is no longer enrolled (source ${SNIPPET} to enroll it again)`,
    );
    await waitEmpty(server.registryDir, 5000);
    // Said once, not at every prompt; the shell is no longer enrolled and can enroll again.
    expect(await pane.run('true')).toBe('');
    expect(await pane.runWithStatus('tmux_run_unenroll')).toEqual({
      output: 'tmux-run: this shell is not enrolled',
      status: 1,
    });
    const again = await enroll(pane);
    expect(again.generation).not.toBe(listing.generation);
    await pane.kill();
    await expectEnded(again.helper_pid, pane.id);
  });

  it('SIGKILL with nobody listing: the shell alone cleans up at its next prompt', async () => {
    const pane = await server.newPane();
    const listing = await enroll(pane);
    process.kill(listing.helper_pid, 'SIGKILL');
    await waitUntil(() => !processAlive(listing.helper_pid), 5000, 'the helper to die');
    expect(await pane.run('true')).toMatch(
      /^tmux-run: the helper for pane %\d+ exited; this pane is no longer enrolled/,
    );
    // The record and socket go with the orphan sweep the shell starts in the background.
    await waitEmpty(server.registryDir, 5000);
    await pane.kill();
  });
});

describe('signals meant for the pane', () => {
  it('SIGINT and SIGHUP sent to the helper are ignored; it stays listed', async () => {
    const pane = await server.newPane();
    const listing = await enroll(pane);
    for (const sig of ['SIGINT', 'SIGHUP', 'SIGINT', 'SIGHUP'] as const) process.kill(listing.helper_pid, sig);
    // Absence of an effect: watch for a second that the helper stays and keeps answering.
    const until = Date.now() + 1000;
    while (Date.now() < until) {
      expect(processAlive(listing.helper_pid)).toBe(true);
      const all = await listed(server.registryDir);
      expect(all.map((p) => [p.pane_id, p.generation, p.helper_pid])).toEqual([
        [pane.id, listing.generation, listing.helper_pid],
      ]);
    }
    expect(await pane.run('true')).toBe('');
    await pane.kill();
    await expectEnded(listing.helper_pid, pane.id);
  });

  it('^C at the prompt and during a foreground command does not reach the helper', async () => {
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await pane.type('half-typed line');
    await server.tmux(['send-keys', '-t', pane.id, 'C-c']);
    await pane.waitForPrompt();
    await server.tmux(['send-keys', '-t', pane.id, 'C-c']);
    await pane.waitForPrompt();

    // A foreground command makes the pane busy; ^C ends the command, not the helper.
    await pane.type('sleep 30', { enter: true });
    await waitUntil(
      async () => (await listed(server.registryDir))[0]?.state === 'busy',
      5000,
      'the pane to be listed busy',
    );
    await server.tmux(['send-keys', '-t', pane.id, 'C-c']);
    await pane.waitForPrompt();
    await waitUntil(
      async () => (await listed(server.registryDir))[0]?.state === 'idle',
      5000,
      'the pane to be listed idle again',
    );

    expect(processAlive(listing.helper_pid)).toBe(true);
    const all = await listed(server.registryDir);
    expect(all.map((p) => [p.pane_id, p.generation, p.helper_pid])).toEqual([
      [pane.id, listing.generation, listing.helper_pid],
    ]);
    expect(await pane.run('echo fine')).toBe('fine');
    expect(await pane.run(`source ${SNIPPET}`)).toMatch(/already enrolled/);
    await pane.kill();
    await expectEnded(listing.helper_pid, pane.id);
  });
});

void SOURCE;

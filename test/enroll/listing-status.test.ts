// The listing answers from what the registry holds: each helper's published status (its exact
// process, the pane's run state), /proc for the shell, the channel's mode file for the modes of its
// last prompt; no helper is asked. Still never a dead or foreign helper listed as usable.
import { lstatSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { socketPath, statusPath } from '../../src/core/enrollment/layout.js';
import { parseStatus } from '../../src/core/enrollment/pane-status.js';
import { enroll, filesIn, listed } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { waitUntil } from '../../lab/waiting.js';

const scope = useServer();

describe('the listing from the registry', () => {
  it('lists a pane without asking its helper: nothing connects to its socket; a stopped helper is listed unresponsive', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    const file = statusPath(server.registryDir, listing.enrollment_generation);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    expect(parseStatus(JSON.parse(readFileSync(file, 'utf8')))).toMatchObject({
      generation: listing.generation,
      helper_pid: listing.helper_pid,
      run: null,
      queued: 0,
      sleeps_after: '10m', // TMUX_RUN_IDLE unset: the default, said from the first status on
    });
    // A socket of the test's own in the helper's place counts who connects.
    const sock = socketPath(server.registryDir, listing.enrollment_generation);
    renameSync(sock, `${sock}.away`);
    let connections = 0;
    const counter = createServer((c) => {
      connections++;
      c.destroy();
    });
    await new Promise<void>((resolve) => counter.listen(sock, resolve));
    try {
      const again = (await listed(server.registryDir)).find((p) => p.pane_id === pane.id);
      expect(again).toMatchObject({ generation: listing.generation, state: 'idle', cwd: server.home, mode: 'auto' });
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => counter.close(resolve));
      renameSync(`${sock}.away`, sock);
    }
    // Stopped, it would answer nothing: listed unresponsive, with why (not left out), idle again once resumed.
    process.kill(listing.helper_pid, 'SIGSTOP');
    try {
      const stopped = await waitUntil(
        async () => (await listed(server.registryDir)).find((p) => p.pane_id === pane.id && p.state === 'unresponsive'),
        10_000,
        'the stopped helper listed unresponsive',
      );
      expect(stopped.helper_problem).toBe(
        `its helper (pid ${listing.helper_pid}) is stopped (SIGSTOP, a debugger or job control): it answers nothing until it is continued (kill -CONT ${listing.helper_pid})`,
      );
    } finally {
      process.kill(listing.helper_pid, 'SIGCONT');
    }
    const resumed = await waitUntil(
      async () => (await listed(server.registryDir)).find((p) => p.pane_id === pane.id && p.state === 'idle'),
      10_000,
      'the resumed helper listed idle',
    );
    expect(resumed.helper_problem).toBeUndefined();
    await pane.kill();
  });

  it("shows the modes of the shell's last prompt, and busy while a command holds the terminal", async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    await pane.run('TMUX_RUN_APPROVE=ask; TMUX_RUN_SANDBOX=read-only');
    await waitUntil(
      async () => (await listed(server.registryDir)).find((p) => p.pane_id === pane.id && p.mode === 'ask'),
      10_000,
      'mode ask in the listing',
    );
    expect((await listed(server.registryDir)).find((p) => p.pane_id === pane.id)?.sandbox).toBe('read-only');
    await pane.type('sleep 30', { enter: true });
    await waitUntil(
      async () => (await listed(server.registryDir)).find((p) => p.pane_id === pane.id && p.state === 'busy'),
      10_000,
      'busy in the listing',
    );
    expect(listing.state).toBe('idle');
    await pane.kill();
  });

  it('never lists a helper the status does not name exactly, nor a killed one; the cleanup removes its status', async () => {
    const server = scope.server;
    const pane = await server.newPane();
    const listing = await enroll(pane);
    const file = statusPath(server.registryDir, listing.enrollment_generation);
    const real = readFileSync(file, 'utf8');
    // Another start time: the pid would name another process.
    writeFileSync(file, JSON.stringify({ ...JSON.parse(real), helper_start: '1' }) + '\n', { mode: 0o600 });
    expect((await listed(server.registryDir)).map((p) => p.pane_id)).not.toContain(pane.id);
    writeFileSync(file, real, { mode: 0o600 });
    expect((await listed(server.registryDir)).map((p) => p.pane_id)).toContain(pane.id);

    process.kill(listing.helper_pid, 'SIGKILL');
    await waitUntil(
      async () => !(await listed(server.registryDir)).some((p) => p.pane_id === pane.id),
      10_000,
      'the killed helper out of the listing',
    );
    await waitUntil(
      () => !filesIn(server.registryDir).some((f) => f.startsWith(listing.enrollment_generation)),
      10_000,
      'its files removed',
    );
    await pane.kill();
  });
});

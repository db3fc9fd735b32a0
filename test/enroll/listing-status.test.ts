// The listing answers from what the registry holds: each helper's published status (its exact
// process, the pane's run state), /proc for the shell, the channel's mode file for the modes of its
// last prompt; no helper is asked. Still never a dead or foreign helper listed as usable.
import { lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { statusPath } from '../../src/enrollment/layout.js';
import { parseStatus } from '../../src/enrollment/pane-status.js';
import { enroll, filesIn, listed } from '../support/enrollment.js';
import { useServer } from '../support/lifecycle.js';
import { waitUntil } from '../support/waiting.js';

const scope = useServer();

describe('the listing from the registry', () => {
  it('lists a pane whose helper cannot answer (stopped), at once: no helper is asked', async () => {
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
    });
    process.kill(listing.helper_pid, 'SIGSTOP');
    try {
      const t0 = performance.now();
      const again = (await listed(server.registryDir)).find((p) => p.pane_id === pane.id);
      const ms = performance.now() - t0;
      expect(again).toMatchObject({ generation: listing.generation, state: 'idle', cwd: server.home, mode: 'auto' });
      // A ping of a stopped helper waits out its whole timeout (1 s) and lists nothing.
      expect(ms).toBeLessThan(1000);
    } finally {
      process.kill(listing.helper_pid, 'SIGCONT');
    }
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

// input pipe on the real stack (tmux, zsh, the SDK's Client): the agent writes a run's stdin with
// tmux_run_input, in call order, as text or base64, before the run starts or while it runs; eof
// ends it; what cannot be taken is refused whole, with nothing written.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import type { Pane } from '../../lab/pane.js';
import { auditEventually } from '../../lab/audit.js';
import { cancel, finalOf, heldRuns, runIdOf, start, wait } from '../long/support.js';
import { input, running } from './support.js';

describe('input pipe', () => {
  const scope = useServer();
  let listing: PaneListing;
  let pane: Pane;
  let mcp: McpHandle;

  beforeAll(async () => {
    ({ pane, listing } = await enrolledPane(scope.server));
    mcp = await scope.startMcp();
  });

  it('echoes lines back in order, then ends at eof with its own status', async () => {
    const s = await start(mcp.client, listing, 'while IFS= read -r l; do echo "got $l"; done; echo bye; exit 3', {
      input: 'pipe',
    });
    const id = runIdOf(s);
    expect(s.pending).toMatchObject({ input: 'pipe', input_bytes: 0 });
    await running(mcp.client, listing, id);
    let given = 0;
    for (const line of ['one', 'two', 'three']) {
      const r = await input(mcp.client, listing, id, `${line}\n`);
      given += line.length + 1;
      expect(r).toEqual({
        ok: true,
        data: { run_id: id, accepted_bytes: line.length + 1, input_bytes: given, state: 'running' },
      });
    }
    const p = (await wait(mcp.client, listing, id, 300)).pending;
    expect(p).toMatchObject({ input: 'pipe', input_bytes: 14, stdout_tail: { data: 'got one\ngot two\ngot three\n' } });
    const runs = await heldRuns(mcp.client);
    expect(runs.find((r) => r.run_id === id)).toMatchObject({ input: 'pipe', input_bytes: 14, attached: false });
    const closed = await input(mcp.client, listing, id, '', { eof: true });
    expect(closed.data).toMatchObject({ accepted_bytes: 0, input_bytes: 14, closed: true });
    const final = await finalOf(mcp.client, listing, id);
    expect(final.data.stdout.data).toBe('got one\ngot two\ngot three\nbye\n');
    expect(final.data.completion).toMatchObject({ state: 'exited', exit_status: 3 });
    // After eof, and after the end: input_closed, nothing written.
    const after = await input(mcp.client, listing, id, 'late\n');
    expect(after.error).toMatchObject({ code: 'input_closed', delivery: 'observed' });
    expect(after.error.message).toMatch(/nothing was written/);
    // The audit trail: input at the start, count and bytes at the end, never the content.
    const end = await auditEventually(scope.server, id, (e) => e.event === 'end');
    expect(end).toMatchObject({ input: 'pipe', input_count: 4, input_bytes: 14 });
    const start_ = await auditEventually(scope.server, id, (e) => e.event === 'start');
    expect(start_).toMatchObject({ input: 'pipe' });
    expect(JSON.stringify([start_, end])).not.toMatch(/three/);
  });

  it('takes binary input through base64, byte for byte', async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 0x80, 0x7f]);
    const s = await start(mcp.client, listing, 'od -An -tx1 -v', { input: 'pipe' });
    const id = runIdOf(s);
    const r = await input(mcp.client, listing, id, bytes.toString('base64'), { encoding: 'base64', eof: true });
    expect(r.data).toMatchObject({ accepted_bytes: 8, input_bytes: 8, closed: true });
    const final = await finalOf(mcp.client, listing, id);
    expect(final.data.stdout.data.trim().split(/\s+/)).toEqual(['00', '01', '02', 'ff', 'fe', '0a', '80', '7f']);
  });

  it('delivers input sent while the run is still queued, once it starts, in order', async () => {
    const blocker = runIdOf(await start(mcp.client, listing, 'sleep 1'));
    const s = await start(mcp.client, listing, 'cat', { input: 'pipe' });
    const id = runIdOf(s);
    expect(s.pending.state).toBe('queued');
    const a = await input(mcp.client, listing, id, 'first ');
    expect(a.data).toMatchObject({ state: 'queued', accepted_bytes: 6 });
    await input(mcp.client, listing, id, 'second', { eof: true });
    await finalOf(mcp.client, listing, blocker);
    const final = await finalOf(mcp.client, listing, id);
    expect(final.data.stdout.data).toBe('first second');
  });

  it('refuses what cannot be taken, each with nothing written', async () => {
    const closed = runIdOf(await start(mcp.client, listing, 'cat; echo "[$?]"'));
    const noInput = await input(mcp.client, listing, closed, 'x');
    expect(noInput.error).toMatchObject({ code: 'input_closed', delivery: 'observed' });
    expect((await finalOf(mcp.client, listing, closed)).data.stdout.data).toBe('[0]\n');
    const unknown = await input(mcp.client, listing, 'e'.repeat(32), 'x');
    expect(unknown.error).toMatchObject({ code: 'unknown_run', delivery: 'not_sent' });
    const bad = await input(mcp.client, listing, closed, '@@@', { encoding: 'base64' });
    expect(bad.error).toMatchObject({ code: 'invalid_arguments', delivery: 'not_sent' });
  });

  it('refuses a backlog at 1 MiB undelivered with nothing of that call taken', async () => {
    // The program never reads its stdin: everything given waits.
    const s = await start(mcp.client, listing, 'sleep 60', { input: 'pipe' });
    const id = runIdOf(s);
    await running(mcp.client, listing, id);
    const chunk = Buffer.alloc(65536, 0x61).toString('base64');
    let given = 0;
    let refused: Record<string, any> | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const r = await input(mcp.client, listing, id, chunk, { encoding: 'base64' });
      if (r.ok) given = r.data.input_bytes;
      else refused = r;
    }
    expect(refused?.error).toMatchObject({ code: 'input_backlog', delivery: 'observed' });
    // The kernel's pipe buffer took some; what waits in the helper stays within 1 MiB.
    expect(given).toBeGreaterThanOrEqual(1024 * 1024 - 65536);
    const p = (await wait(mcp.client, listing, id, 0)).pending;
    expect(p.input_bytes, 'the refused call took nothing').toBe(given);
    const small = await input(mcp.client, listing, id, 'x');
    expect(small.ok === true || small.error.code === 'input_backlog').toBe(true);
    await cancel(mcp.client, listing, id, 5000);
  });

  it('implies overflow tail, unless stop is given', async () => {
    const many = 'head -c 70000 /dev/zero | tr "\\0" x';
    const tail = await finalOf(mcp.client, listing, runIdOf(await start(mcp.client, listing, many, { input: 'pipe' })));
    expect(tail.data.stdout).toMatchObject({ truncated: true, bytes: 70000 });
    const stop = await finalOf(
      mcp.client,
      listing,
      runIdOf(await start(mcp.client, listing, many, { input: 'pipe', overflow: 'stop' })),
    );
    expect(stop.error.code).toBe('output_limit_exceeded');
  });

  it('runs walled in a sandboxed pane, pipe and terminal alike (test/sandbox/input has the rest)', async () => {
    await pane.run('TMUX_RUN_SANDBOX=read-only');
    for (const mode of ['pipe', 'terminal']) {
      const id = runIdOf(
        await start(mcp.client, listing, 'read -r l; touch ro-$$ 2>/dev/null || echo "refused $l"', { input: mode }),
      );
      await input(mcp.client, listing, id, mode === 'pipe' ? 'x\n' : 'x\r');
      const r = await finalOf(mcp.client, listing, id);
      expect(r.data.stdout.data, mode).toContain('refused x');
      expect(r.data.completion, mode).toMatchObject({ state: 'exited', exit_status: 0 });
    }
    await pane.run('unset TMUX_RUN_SANDBOX');
  });
});

// Watching a run as it goes on the real stack: the tails in pending results advance, and
// tmux_run_output reads a stream by absolute offsets, chunks that put back exactly the bytes the
// script produced (UTF-8 text with a character across a chunk edge, and bytes that are not UTF-8).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import { auditEventually } from '../../lab/audit.js';
import { markerDir } from '../../lab/markers.js';
import type { McpHandle } from '../../lab/mcp.js';
import { cancel, chunkBytes, finalOf, readAll, readOutput, runIdOf, start, targetOf, wait } from './support.js';

describe('live output', () => {
  const scope = useServer();
  let listing: PaneListing;
  let mcp: McpHandle;
  let marks: string;

  beforeAll(async () => {
    ({ listing } = await enrolledPane(scope.server));
    mcp = await scope.startMcp();
    marks = markerDir(scope.server);
  });

  it('a run printing a line a second, watched through three waits whose tails advance', async () => {
    const s = await start(mcp.client, listing, 'i=1; while [ $i -le 8 ]; do echo "line $i"; i=$((i+1)); sleep 1; done');
    expect(s.pending).toMatchObject({ background: false, stderr_tail: { from: 0, encoding: 'utf-8', data: '' } });
    const id = runIdOf(s);
    let last = -1;
    const messages: string[] = [];
    for (let i = 0; i < 3; i++) {
      const p = (await wait(mcp.client, listing, id, 1500, { onprogress: (n) => messages.push(n.message ?? '') }))
        .pending;
      expect(p, 'still running').toBeDefined();
      const tail = p.stdout_tail;
      expect(tail.encoding).toBe('utf-8');
      // The tail ends where the stream stands, and it has moved on since the last wait.
      expect(tail.from + Buffer.byteLength(tail.data)).toBe(p.stdout_bytes);
      expect(p.stdout_bytes).toBeGreaterThan(last);
      const n = Number(/line (\d+)\n$/.exec(tail.data)?.[1]);
      expect(n).toBeGreaterThanOrEqual(i + 1);
      last = p.stdout_bytes;
    }
    // Progress notifications carry the last line too.
    expect(
      messages.some((m) => /; last line: line \d$/.test(m)),
      messages.join(' | '),
    ).toBe(true);
    const final = await finalOf(mcp.client, listing, id);
    expect(final.data.stdout.data).toBe([1, 2, 3, 4, 5, 6, 7, 8].map((n) => `line ${n}\n`).join(''));
  });

  it('a pending tail is the last 2048 bytes, starting on a character', async () => {
    // 1000 x "€" (3000 bytes): the last 2048 start 2 bytes into a character, so the tail starts 2 later.
    const s = await start(mcp.client, listing, `awk 'BEGIN{for(i=0;i<1000;i++) printf "\\342\\202\\254"}'; sleep 30`);
    const id = runIdOf(s);
    let p: Record<string, any> = {};
    for (let i = 0; i < 40 && !(p.stdout_bytes >= 3000); i++) p = (await wait(mcp.client, listing, id, 250)).pending;
    expect(p.stdout_bytes).toBe(3000);
    expect(p.stdout_tail).toEqual({ from: 3000 - 2046, encoding: 'utf-8', data: '€'.repeat(682) });
    const c = await cancel(mcp.client, listing, id, 10_000);
    expect(c.error.code).toBe('cancelled');
    // Output stays readable after a cancel.
    const r = await readOutput(mcp.client, listing, { run_id: id, stream: 'stdout', from: 2999, max_bytes: 10 });
    expect(r.data).toMatchObject({ from: 2999, to: 3000, encoding: 'base64', total_bytes: 3000, finished: true });
  });

  it('reads a 200 KiB UTF-8 stream in chunks that put back exactly its bytes, a character across each chunk edge', async () => {
    // "ab€\n" is 6 bytes; 65536 bytes end 2 bytes into a "€", so each full chunk ends early.
    const expected = Buffer.from('ab€\n'.repeat(40000)).subarray(0, 204800);
    const s = await start(mcp.client, listing, `yes 'ab€' | head -c 204800`, { stdout_limit: 262144 });
    const { bytes, chunks } = await readAll(mcp.client, listing, runIdOf(s), 'stdout');
    expect(bytes.equals(expected)).toBe(true);
    expect(chunks.every((c) => c.encoding === 'utf-8')).toBe(true);
    expect(chunks.some((c) => c.to - c.from === 65534)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ total_bytes: 204800, kept_from: 0, finished: true, state: 'finished' });
    // Chunks of at most 2 bytes: a character that does not fit comes as base64, never an empty chunk.
    const parts: Buffer[] = [];
    const encodings = new Set<string>();
    for (let from = 0; from < 60;) {
      const c = (await readOutput(mcp.client, listing, { run_id: runIdOf(s), stream: 'stdout', from, max_bytes: 2 }))
        .data;
      expect(c.to).toBeGreaterThan(from);
      encodings.add(c.encoding);
      parts.push(chunkBytes(c));
      from = c.to;
    }
    expect(Buffer.concat(parts).equals(expected.subarray(0, Buffer.concat(parts).length))).toBe(true);
    expect([...encodings].sort()).toEqual(['base64', 'utf-8']);
  });

  it('reads a 200 KiB stream that is not UTF-8 as base64 chunks, exactly', async () => {
    const file = join(marks, 'random.bin');
    const s = await start(mcp.client, listing, `head -c 204800 /dev/urandom > '${file}'; cat '${file}'`, {
      stdout_limit: 262144,
    });
    const { bytes, chunks } = await readAll(mcp.client, listing, runIdOf(s), 'stdout');
    expect(bytes.equals(readFileSync(file))).toBe(true);
    expect(chunks.some((c) => c.encoding === 'base64')).toBe(true);
    expect(chunks.every((c) => chunkBytes(c).length <= 65536)).toBe(true);
  });

  it('offsets: from past the end is empty, from before kept_from starts there; bad input, unknown runs and stale generations are refused', async () => {
    const r = await start(mcp.client, listing, 'seq 1 20000', {
      overflow: 'tail',
      stdout_limit: 1000,
      wait_ms: 10_000,
    });
    const id = runIdOf(r);
    expect(r.data.stdout).toMatchObject({ truncated: true, bytes: 108894, kept_from: 107894 });
    const head = await readOutput(mcp.client, listing, { run_id: id, stream: 'stdout', from: 0, max_bytes: 5 });
    expect(head.data).toMatchObject({ from: 107894, to: 107899, kept_from: 107894, total_bytes: 108894 });
    const ahead = await readOutput(mcp.client, listing, { run_id: id, stream: 'stdout', from: 200000 });
    expect(ahead.data).toMatchObject({ from: 200000, to: 200000, data: '', encoding: 'utf-8' });
    const some = 'a'.repeat(32);
    const t = targetOf(listing);
    const bad = [
      { target: t, run_id: id, stream: 'stdin' },
      { target: t, run_id: id, stream: 'stdout', max_bytes: 65537 },
      { target: t, run_id: id, stream: 'stdout', max_bytes: 0 },
      { target: t, run_id: id, stream: 'stdout', from: -1 },
      { target: t, run_id: 'nope', stream: 'stdout' },
      { target: t, run_id: id },
    ];
    for (const args of bad) {
      const res = (await mcp.client.callTool({ name: 'tmux_run_output', arguments: args })) as any;
      expect(res.isError).toBe(true);
      expect(res.structuredContent.error, JSON.stringify(args)).toMatchObject({
        code: 'invalid_arguments',
        delivery: 'not_sent',
      });
    }
    // The refusal says what the stream must be, not only that it is not allowed.
    const stdin = (await mcp.client.callTool({ name: 'tmux_run_output', arguments: bad[0] })) as any;
    expect(stdin.structuredContent.error.message).toContain('argument stream must be one of "stdout", "stderr"');
    const unknown = await readOutput(mcp.client, listing, { run_id: some, stream: 'stdout' });
    expect(unknown.error).toMatchObject({ code: 'unknown_run', delivery: 'not_sent', effects: { state: 'none' } });
    const staleRes = (await mcp.client.callTool({
      name: 'tmux_run_output',
      arguments: { target: { ...t, generation: 'f'.repeat(32) }, run_id: id, stream: 'stdout' },
    })) as any;
    expect(staleRes.structuredContent.error).toMatchObject({ code: 'stale_generation', delivery: 'not_sent' });
    // Nothing changed: the run's output is still there.
    const again = await readOutput(mcp.client, listing, { run_id: id, stream: 'stdout', from: 108890 });
    expect(again.data).toMatchObject({ from: 108890, to: 108894, data: '000\n' });
  });

  it('what a run prints while it is being stopped (its TERM trap) is kept and counted', async () => {
    // A service saying goodbye on SIGTERM, stopped by tmux_run_cancel: its last words were
    // dropped (0 bytes counted) though the script printed them and exited 3.
    const script = `trap 'echo "stopping: state saved"; echo bye >&2; exit 3' TERM; echo started; sleep 60`;
    const s = await start(mcp.client, listing, script);
    const id = runIdOf(s);
    let p: Record<string, any> = s.pending;
    for (let i = 0; i < 40 && p.stdout_bytes < 8; i++) p = (await wait(mcp.client, listing, id, 250)).pending;
    expect(p.stdout_tail.data).toBe('started\n');
    const c = await cancel(mcp.client, listing, id, 10_000);
    expect(c.error).toMatchObject({ code: 'cancelled', effects: { completion: { state: 'exited', exit_status: 3 } } });
    const out = await readOutput(mcp.client, listing, { run_id: id, stream: 'stdout' });
    expect(out.data).toMatchObject({ data: 'started\nstopping: state saved\n', finished: true, kept_from: 0 });
    // (/bin/sh may say first that its sleep was Terminated.)
    const err = await readOutput(mcp.client, listing, { run_id: id, stream: 'stderr' });
    expect(err.data.data).toMatch(/bye\n$/);
    const end = await auditEventually(scope.server, id, (e) => e.event === 'end');
    expect(end).toMatchObject({
      outcome: 'cancelled',
      exit_status: 3,
      stdout_bytes: 30,
      stderr_bytes: err.data.total_bytes,
    });
  });
});

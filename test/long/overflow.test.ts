// overflow: "tail" on tmux_run_start on the real stack: a run that prints far more than its limit
// goes on to its end; the result keeps the last `limit` bytes and counts them all.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PaneListing } from '../../src/broker/registry.js';
import { auditEntries } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { useServer } from '../../lab/lifecycle.js';
import type { McpHandle } from '../../lab/mcp.js';
import { finalOf, runIdOf, start, wait } from './support.js';

describe('overflow tail', () => {
  const scope = useServer();
  let listing: PaneListing;
  let mcp: McpHandle;

  beforeAll(async () => {
    ({ listing } = await enrolledPane(scope.server));
    mcp = await scope.startMcp();
  });

  it('seq 1 200000 at limit 65536 ends ok with exit 0, truncated, the last line intact, every byte counted', async () => {
    const s = await start(mcp.client, listing, 'seq 1 200000', { overflow: 'tail', stdout_limit: 65536 });
    const r = await finalOf(mcp.client, listing, runIdOf(s));
    expect(r.ok, JSON.stringify(r).slice(0, 300)).toBe(true);
    expect(r.data.completion).toEqual({ state: 'exited', exit_status: 0, signal: null });
    const out = r.data.stdout;
    expect(out).toMatchObject({ encoding: 'utf-8', truncated: true, bytes: 1288895, kept_from: 1288895 - 65536 });
    expect(out.data.length).toBe(65536);
    expect(out.data.endsWith('\n199999\n200000\n')).toBe(true);
    expect(r.data.stderr).toEqual({ encoding: 'utf-8', data: '', bytes: 0, truncated: false });
    // Waiting again gives the same result; the audit trail counts every byte.
    expect(await wait(mcp.client, listing, runIdOf(s), 0)).toEqual(r);
    const end = auditEntries(scope.server).find((e) => e.run_id === runIdOf(s) && e.event === 'end');
    expect(end).toMatchObject({ outcome: 'exited', exit_status: 0, stdout_bytes: 1288895 });
  });

  it('a kept tail starts on a character; a stream within its limit is as without overflow tail', async () => {
    // "€€ab" is 8 bytes: limit 4 keeps the last 4, which start inside the second € (2 of its 3 bytes).
    const r = await start(mcp.client, listing, `printf '\\342\\202\\254\\342\\202\\254ab'; printf 'err' >&2`, {
      overflow: 'tail',
      stdout_limit: 4,
      wait_ms: 10_000,
    });
    expect(r.data.stdout).toEqual({ encoding: 'utf-8', data: 'ab', bytes: 8, truncated: true, kept_from: 6 });
    expect(r.data.stderr).toEqual({ encoding: 'utf-8', data: 'err', bytes: 3, truncated: false });
  });

  it('without overflow tail a stream over its limit still stops the run', async () => {
    const r = await start(mcp.client, listing, 'seq 1 200000', { stdout_limit: 1000, wait_ms: 10_000 });
    expect(r.error).toMatchObject({ code: 'output_limit_exceeded', delivery: 'observed' });
    const s = await start(mcp.client, listing, 'seq 1 200000', {
      overflow: 'stop',
      stdout_limit: 1000,
      wait_ms: 10_000,
    });
    expect(s.error).toMatchObject({ code: 'output_limit_exceeded' });
  });
});

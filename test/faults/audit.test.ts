// Semantics 10: when the audit trail cannot be written, a run is refused before it starts
// (audit_unavailable), and the pane works again once the trail can be written.
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditEntries, auditFile } from '../../lab/audit.js';
import { enrolledPane } from '../../lab/enrollment.js';
import { markerDir } from '../../lab/markers.js';
import type { McpHandle } from '../../lab/mcp.js';
import { withServer } from '../../lab/lifecycle.js';
import { sleep, waitUntil } from '../../lab/waiting.js';
import { callWith, errorOf, runIdOf } from './support.js';
import type { PaneListing } from '../../src/broker/registry.js';

// One call that must be refused for the audit trail, with nothing run.
async function expectRefused(mcp: McpHandle, listing: PaneListing, marker: string): Promise<void> {
  const c = await callWith(mcp, listing, `touch '${marker}'`);
  const e = errorOf(c);
  expect(e.code).toBe('audit_unavailable');
  expect(e.delivery).toBe('observed');
  expect(e.effects?.state).toBe('none');
  expect(e.message).not.toContain(marker); // the script is never echoed back
  await sleep(200);
  expect(existsSync(marker)).toBe(false);
}

describe('an audit trail that cannot be written', () => {
  it('refuses runs with audit_unavailable before they start: a directory in its place, a file of another user, a full disk', async (ctx) => {
    await withServer(async (server, scope) => {
      const { listing } = await enrolledPane(server);
      const mcp = await scope.startMcp();
      const marks = markerDir(server);
      const file = auditFile(server);
      const first = await callWith(mcp, listing, 'echo first');
      expect(first.isError).toBe(false);
      expect(existsSync(file)).toBe(true);

      // A directory where the file should be.
      renameSync(file, `${file}.saved`);
      mkdirSync(file);
      await expectRefused(mcp, listing, join(marks, 'dir'));
      rmdirSync(file);
      renameSync(`${file}.saved`, file);

      // A file that belongs to another user (root ignores mode bits, so ownership is the test).
      chownSync(file, 65534, 65534);
      await expectRefused(mcp, listing, join(marks, 'uid'));
      chownSync(file, process.getuid!(), process.getgid!());

      // A full file system (a 16 KiB tmpfs over the trail's directory), when this machine lets us mount one.
      const dir = dirname(file);
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k,mode=0700', 'tmpfs', dir]).status === 0;
      try {
        if (mounted) {
          try {
            writeFileSync(join(dir, 'filler'), Buffer.alloc(64 * 1024));
          } catch (e) {
            expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
          }
          await expectRefused(mcp, listing, join(marks, 'full'));
        }
      } finally {
        if (mounted) spawnSync('umount', [dir]);
      }

      // Writable again: the pane runs, and the trail holds the runs before and after.
      const after = await callWith(mcp, listing, 'echo after');
      expect(after.structured.data?.stdout.data).toBe('after\n');
      // The end entry follows the reply (the caller does not wait for it): wait for it to land.
      const endIds = (): string[] =>
        auditEntries(server)
          .filter((e) => e.event === 'end')
          .map((e) => e.run_id);
      await waitUntil(() => endIds().length >= 2, 5000, 'the end entry of the last run').catch(() => undefined);
      expect(endIds()).toEqual([runIdOf(first), runIdOf(after)]);
      if (!mounted) await ctx.annotate?.('the full-disk case was skipped: mount -t tmpfs is not permitted here');
    });
  });
});

// An upgrade while panes are enrolled: a helper keeps running the code it was started with, so a
// broker of another build refuses it (helper_outdated, nothing sent) instead of speaking a
// protocol the helper may not share; enrolling the pane again with this build makes it work.
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BUILD_ID } from '../../src/core/protocol/build.js';
import { waitListed } from '../../lab/enrollment.js';
import { markerPath, touchScript } from '../../lab/markers.js';
import { listedPanes } from '../../lab/mcp.js';
import { productEnv, ROOT, SOURCE } from '../../lab/product.js';
import { runCli } from '../../lab/cli.js';
import { withServer } from '../../lab/lifecycle.js';
import { callWith, errorOf } from './support.js';

const OTHER_BUILD = '0123456789abcdef';

/** A copy of this install whose build differs, as the one a pane enrolled with before an upgrade. */
function otherInstall(base: string): string {
  const dir = join(base, 'older-install');
  mkdirSync(dir);
  for (const part of ['dist', 'shell', 'package.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const id = join(dir, 'dist', 'generated', 'build-id.cjs');
  const text = readFileSync(id, 'utf8');
  expect(text).toContain(JSON.stringify(BUILD_ID));
  writeFileSync(id, text.replace(JSON.stringify(BUILD_ID), JSON.stringify(OTHER_BUILD)));
  return dir;
}

describe('a pane enrolled by another build of tmux-run', () => {
  it('is refused helper_outdated with nothing sent, by every tool that reaches it, and works once enrolled again', async () => {
    expect(BUILD_ID).toMatch(/^[a-f0-9]{16}$/);
    expect(BUILD_ID).not.toBe(OTHER_BUILD);
    await withServer(async (server, scope) => {
      const older = otherInstall(server.baseDir);
      const pane = await server.newPane();
      const shellPid = await pane.shellPid();
      expect((await pane.runWithStatus(`source ${join(older, 'shell', 'tmux-run.zsh')}`)).status).toBe(0);
      const old = await waitListed(pane, shellPid);
      const mcp = await scope.startMcp();

      // Listed (the pane is enrolled), but a run never reaches its helper.
      expect((await listedPanes(mcp.client)).map((p) => p.generation)).toEqual([old.generation]);
      // ... and its text tells an agent so before it tries.
      const listText = async (): Promise<string> => {
        const r = await mcp.client.callTool({ name: 'tmux_enrolled_panes', arguments: {} });
        return (r.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
      };
      expect(await listText()).toMatch(/another build of tmux-run: runs are refused helper_outdated/);
      const marker = markerPath(server);
      const e = errorOf(await callWith(mcp, old, touchScript(marker)));
      expect(e.code).toBe('helper_outdated');
      expect(e.delivery).toBe('not_sent');
      expect(e.effects?.state).toBe('none');
      expect(e.message).toContain(`build ${OTHER_BUILD}`);
      expect(e.message).toContain(`this server is build ${BUILD_ID}`);
      // What it tells the person to do must work: sourcing the snippet alone in an enrolled shell
      // only says it is enrolled (the message said "source shell/tmux-run.zsh in it").
      expect(e.message).toMatch(/tmux_run_unenroll, then source shell\/tmux-run\.zsh/);
      expect((await pane.run(SOURCE)).trim()).toMatch(/^tmux-run: pane %\d+ is already enrolled/);
      expect((await listedPanes(mcp.client)).map((p) => p.generation)).toEqual([old.generation]);
      expect(e.message).toMatch(/nothing was run/);
      const target = { kind: 'pane', id: old.pane_id, generation: old.generation };
      const start = await mcp.client.request(
        {
          method: 'tools/call',
          params: { name: 'tmux_run_start', arguments: { target, script: touchScript(marker) } },
        },
        CallToolResultSchema,
      );
      expect((start.structuredContent as Record<string, any>).error.code).toBe('helper_outdated');

      // tmux-run doctor tells the person which pane to enroll again (a warning: doctor still passes).
      const doctor = async () => {
        const r = await runCli(['doctor', '--json'], productEnv(server));
        expect(r.code, r.stderr).toBe(0);
        return (JSON.parse(r.stdout) as Array<Record<string, unknown>>).find((c) => c.check === 'enrollments')!;
      };
      const warned = await doctor();
      expect(warned).toMatchObject({ ok: true, warning: true });
      expect(warned.detail).toContain(`${old.pane_id} enrolled by another build of tmux-run`);
      expect(warned.fix).toMatch(/tmux_run_unenroll, then source the snippet/);

      // The person enrolls the pane again with this build: the same shell, a new enrollment.
      expect((await pane.runWithStatus('tmux_run_unenroll')).status).toBe(0);
      expect((await pane.runWithStatus(SOURCE)).status).toBe(0);
      const now = await waitListed(pane, shellPid);
      expect(now.generation).not.toBe(old.generation);
      expect(await listText()).not.toMatch(/another build/);
      const ok = await callWith(mcp, now, touchScript(marker));
      expect(ok.structured.ok, JSON.stringify(ok.structured)).toBe(true);
      expect(existsSync(marker)).toBe(true);
      expect(await doctor()).toMatchObject({ ok: true, fix: null });
      expect((await pane.runWithStatus('tmux_run_unenroll')).status).toBe(0);
    });
  });
});
